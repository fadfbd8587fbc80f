"""A stopped test session takes what it started with it (installed by tests/conftest.py).

SIGTERM or SIGINT to a pytest process (the controller or an xdist worker; `make` passes a SIGTERM on
to its pytest) first ends every process that descends from it: SIGTERM, so that a harness among
them (`dvc repro` -> `python -m flows.evaluate`) removes its sandboxes, workspaces and cgroups
itself (stages/sandbox/debris.py), then SIGKILL for whatever is still there after
`GRACE_SECONDS`, then a sweep of what the SIGKILLed ones left. The signal then takes its usual
course (pytest's KeyboardInterrupt: fixtures are torn down and the session reports). Without this,
a test's `dvc repro` or Prefect server ran on after the session was gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from scibench_testing.processes import descendants

from stages.sandbox import debris

GRACE_SECONDS = 8.0


def install() -> None:
    """Put the handler in front of the current SIGTERM and SIGINT handlers of this process."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(ValueError):  # not the main thread: nothing to install
            signal.signal(signum, _handler(signal.getsignal(signum)))


def end_descendants(pid: int, grace: float = GRACE_SECONDS) -> int:
    """SIGTERM every descendant of `pid`, SIGKILL those left after `grace` s; returns how many there were."""
    family = descendants(pid)
    for child in family:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _alive(family):
        time.sleep(0.1)
    for child in _alive(family):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)
    return len(family)


def _alive(family: dict[int, tuple[str, str]]) -> list[int]:
    alive = []
    for pid, (started, _) in family.items():
        with contextlib.suppress(OSError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z" and fields[19] == started:
                alive.append(pid)
    return alive


def _handler(previous):
    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one cleanup, however many signals arrive
        end_descendants(os.getpid())
        debris.sweep()
        if signum == signal.SIGTERM:  # pytest knows SIGINT; SIGTERM is turned into the same stop
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            raise KeyboardInterrupt
        if callable(previous):
            previous(signum, frame)
        else:
            raise KeyboardInterrupt

    return handler
