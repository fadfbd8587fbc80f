"""What the test_process_*.py modules share: local processes wired as the sandbox is, and a deadline.

The processes stand in for bwrap and its launcher: their stdin is the report pipe's write end, on
which they write `x` and `done <status>` as the launcher does.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field

DEADLINE = 20.0  # generous: every watch here ends well within a second


@dataclass
class Run:
    """A local process wired as the sandbox is: stdin is the report pipe's write end."""

    proc: subprocess.Popen[bytes]
    report_r: int
    events: list[tuple] = field(default_factory=list)


def start(script: str, *argv: str) -> Run:
    report_r, report_w = os.pipe()
    proc = subprocess.Popen(["/bin/sh", "-c", script, "sh", *argv], stdin=report_w, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    os.close(report_w)
    return Run(proc, report_r)
