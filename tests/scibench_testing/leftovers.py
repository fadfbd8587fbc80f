"""What the test suite left on the host: checked once every test has ended (tests/conftest.py).

A snapshot at the start of the session records the processes, scibench folders and cgroups already
there; at the end, these count as left behind:
- processes started during the session that are orphans now (reparented to init: whoever started
  them is gone), with their descendants: a sandbox's bwrap, a Prefect server, a `dvc repro`;
- tagged folders and cgroups (stages/sandbox/debris.py) new since the start whose owner is gone;
- untagged `scibench-*` folders in the temp directories new since the start (a tagged name is the
  rule; an untagged one is whatever some code made by hand).
Another user's live harness on the machine (its owner alive, not an orphan) is not ours and is left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from scibench_testing.processes import processes

from stages.sandbox import debris

SETTLE_SECONDS = 10.0


@dataclass(frozen=True)
class Snapshot:
    """The host as the session found it."""

    processes: frozenset[tuple[int, str]]  # (pid, start time)
    paths: frozenset[Path]


def scibench_paths() -> set[Path]:
    """Every `scibench-*` folder in the temp directories and every `scibench-*` cgroup."""
    folders = {entry for folder in debris.default_temp_dirs() if folder.is_dir()
               for entry in folder.glob("scibench-*") if entry.is_dir()}
    return folders | set(debris.cgroup_dirs(debris.CGROUP_ROOT))


def take() -> Snapshot:
    """Record what is there now."""
    table = processes()
    return Snapshot(frozenset((pid, started) for pid, (_, started, _) in table.items()),
                    frozenset(scibench_paths()))


def left_behind(start: Snapshot) -> list[str]:
    """What the session left, one line each; waits up to SETTLE_SECONDS for exiting processes."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        found = _orphans(start) + _paths(start)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def _orphans(start: Snapshot) -> list[str]:
    table = processes()
    new = {pid for pid, (_, started, _) in table.items() if (pid, started) not in start.processes}
    roots = [pid for pid in new if table[pid][0] == 1]
    found, frontier = set(roots), list(roots)
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, (ppid, _, _) in table.items() if ppid == parent and pid not in found]
        found.update(children)
        frontier += children
    return [f"process {pid}: {table[pid][2]}" for pid in sorted(found)]


def _paths(start: Snapshot) -> list[str]:
    lines = []
    for path in sorted(scibench_paths() - start.paths):
        owner = debris.owner_of(path.name)
        if owner is None or not debris.alive(*owner):
            kind = "cgroup" if path.is_relative_to(debris.CGROUP_ROOT) else "folder"
            lines.append(f"{kind} {path}" + ("" if owner else " (untagged)"))
    return lines
