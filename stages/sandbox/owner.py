"""Whose a host folder or cgroup is: the owner tag `<pid>.<start>` of the harness process that made it.

The start time (clock ticks since boot, /proc/<pid>/stat field 22) tells a reused pid apart from
the owner. The cgroups (cgroups.py) and temp folders (debris.py) are named with it, and debris.py
sweeps by it.
"""

from __future__ import annotations

import os
from pathlib import Path


def owner_tag(pid: int | None = None) -> str:
    """`<pid>.<start>` of `pid` (default: this process)."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}.{start_time(pid)}"


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None when there is no such process."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None
