"""The processes a test started, read from /proc: who descends from whom, and who outlived a kill."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def processes() -> dict[int, tuple[int, str, str]]:
    """Every live process: pid -> (parent pid, start time, command line), from /proc."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found[int(stat.parent.name)] = (int(fields[1]), fields[19], cmdline.strip()[:200])
    return found


def descendants(pid: int) -> dict[int, tuple[str, str]]:
    """The live descendants of `pid`: pid -> (start time, command line)."""
    table, family, frontier = processes(), {}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, started, cmdline) in table.items():
            if ppid == parent and child not in family:
                family[child] = (started, cmdline)
                frontier.append(child)
    return family


def survivors(family: dict[int, tuple[str, str]], settle: float = 3.0) -> list[str]:
    """Command lines of `family` members still alive after `settle` s; they are killed then."""
    deadline = time.monotonic() + settle
    while True:
        table = processes()
        alive = {pid: cmd for pid, (started, cmd) in family.items() if table.get(pid, (0, None))[1] == started}
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for pid in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return sorted(alive.values())


def running_with_arg(token: str) -> list[int]:
    """Host pids of live (not zombie) processes that have `token` as one of their arguments."""
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
            state = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in argv and state != "Z":
            pids.append(int(cmdline.parent.name))
    return pids
