"""What a harness leaves on the host for its runs, whose it is, and how it is cleared away.

Everything a harness makes on the host for a run carries its owner tag `<pid>.<start>` (owner.py: the
process id and its start time in clock ticks since boot, /proc/<pid>/stat field 22, so a reused
pid is told apart from the owner):

    <tmp>/scibench-ws-<tag>-XXXXXXXX         a query's workspace (stages/sandbox/workspace.py)
    <tmp>/scibench-llm-<tag>-XXXXXXXX        a model proxy's socket folder
    <tmp>/scibench-generated-<tag>-XXXXXXXX  a generated benchmark's scratch folder
    <tmp>/scibench-pool-<tag>-XXXXXXXX       a warm pool's exchange folder (warm.py)
    <cgroupfs>/.../scibench-<tag>-<hex>      a run's cgroup, in each controller (cgroups.py)

A harness killed with SIGKILL cannot remove them; its sandboxes die with it (bwrap's
`--die-with-parent`, and the kernel ends a PID namespace with its init), the folders and empty
cgroups stay. So each harness sweeps at its start (`start_harness`, called by the first sandboxed
run of a process and by the flows' entry points): it removes what belongs to owners that are gone,
killing any process still inside a dead owner's cgroup, and never touches a live owner's. It
reports what it removed on stderr (one line).

SIGTERM, SIGINT and SIGHUP to a harness (`start_harness` in the main thread installs the
handlers): every live sandbox's process group is SIGKILLed, the process's own workspaces, folders
and cgroups are removed, and the signal then takes its previous course (the default action ends
the process with that signal; Python's SIGINT handler raises KeyboardInterrupt). From then on
`stopping()` is true: a run that ends after the signal is an infra error, never an agent's result.

A harness run as a DVC stage (`DVC_STAGE` is set) also asks the kernel for SIGTERM when its parent,
`dvc repro`, exits (`die_with_parent`): dvc neither passes a SIGTERM on to its stage nor ends it
when it is itself ended, and a stage left running is a whole evaluation nobody waits for. Run by
hand (`python -m flows.evaluate ... &`) a harness outlives the shell that started it, as expected.

Names of an older layout (no start time: `scibench-<pid>-<hex>` cgroups) are swept when their pid
is gone; untagged temp folders are left alone, since nothing tells whose they are.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from stages.sandbox.cgroups import kill_and_remove
from stages.sandbox.owner import owner_tag, start_time

TEMP_KINDS = ("ws", "llm", "generated", "pool")
CGROUP_ROOT = Path("/sys/fs/cgroup")
_TEMP_NAME = re.compile(r"scibench-(?:ws|llm|generated|pool)-(\d+)\.(\d+)-[^/]+")
_CGROUP_NAME = re.compile(r"scibench-(\d+)(?:\.(\d+))?-[0-9a-f]{12}")
_CGROUP_DEPTH = 6
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
PR_SET_PDEATHSIG = 1

_lock = threading.Lock()
_live: set[subprocess.Popen] = set()
_started_in: int | None = None  # the pid whose start ran (a forked child starts anew)
_stopping = False


@dataclass
class Debris:
    """Leftovers found on the host: folders, cgroup directories and the owners they belonged to."""

    folders: list[Path] = field(default_factory=list)
    cgroups: list[Path] = field(default_factory=list)
    owners: set[int] = field(default_factory=set)
    killed: int = 0  # processes still inside a removed cgroup

    def __bool__(self) -> bool:
        return bool(self.folders or self.cgroups)

    def describe(self) -> str:
        """One line: how many of each were removed, and whose."""
        return (f"{len(self.folders)} workspaces/folders, {len(self.cgroups)} cgroups, {self.killed} "
                f"processes of {len(self.owners)} harness runs that are gone (pids "
                f"{', '.join(map(str, sorted(self.owners)))})")


def temp_prefix(kind: str) -> str:
    """The `mkdtemp` prefix of a host folder of this process: `scibench-<kind>-<tag>-`."""
    if kind not in TEMP_KINDS:
        raise ValueError(f"unknown temp folder kind {kind!r} (known: {TEMP_KINDS})")
    return f"scibench-{kind}-{owner_tag()}-"


def alive(pid: int, start: int | None) -> bool:
    """Whether the owner still runs: its pid exists and, when known, started when the owner did."""
    now = start_time(pid)
    return now is not None and (start is None or now == start)


def owner_of(name: str) -> tuple[int, int | None] | None:
    """The (pid, start time) a tagged folder or cgroup name carries, or None for an untagged name."""
    match = _TEMP_NAME.fullmatch(name) or _CGROUP_NAME.fullmatch(name)
    if match is None:
        return None
    return int(match[1]), int(match[2]) if match[2] else None


def find(owned_by_gone: bool = True, owner: str | None = None,
         temp_dirs: tuple[Path, ...] | None = None, cgroup_root: Path = CGROUP_ROOT) -> Debris:
    """The tagged folders and cgroups of owners that are gone (or, with `owner`, of that tag only)."""
    found = Debris()

    def wanted(pid: int, start: int | None) -> bool:
        if owner is not None:
            return f"{pid}.{start}" == owner
        return owned_by_gone and not alive(pid, start)

    for folder in temp_dirs or default_temp_dirs():
        with contextlib.suppress(OSError):
            for entry in sorted(folder.iterdir()):
                tag = owner_of(entry.name) if _TEMP_NAME.fullmatch(entry.name) else None
                if tag and wanted(*tag) and entry.is_dir() and not entry.is_symlink():
                    found.folders.append(entry)
                    found.owners.add(tag[0])
    for path in cgroup_dirs(cgroup_root):
        tag = owner_of(path.name) if _CGROUP_NAME.fullmatch(path.name) else None
        if tag and wanted(*tag):
            found.cgroups.append(path)
            found.owners.add(tag[0])
    return found


def remove(debris: Debris) -> Debris:
    """Kill what is left in the cgroups, remove them and the folders; returns what was removed."""
    for path in debris.cgroups:
        debris.killed += kill_and_remove(path)
    for folder in debris.folders:
        shutil.rmtree(folder, ignore_errors=True)
    # What could not be removed (another user's, say) is not reported as removed.
    debris.folders = [folder for folder in debris.folders if not folder.exists()]
    debris.cgroups = [path for path in debris.cgroups if not path.exists()]
    return debris


def sweep(temp_dirs: tuple[Path, ...] | None = None, cgroup_root: Path = CGROUP_ROOT) -> Debris:
    """Remove the leftovers of harnesses that are gone; never a live one's. Reports on stderr."""
    debris = remove(find(temp_dirs=temp_dirs, cgroup_root=cgroup_root))
    if debris:
        print(f"scibench: swept the leftovers of killed runs: {debris.describe()}", file=sys.stderr)
    return debris


def start_harness() -> None:
    """Sweep what killed harnesses left (once per process); in the main thread, handle stop signals.

    Call it again where another library installs its own handlers (a Prefect flow run installs a
    SIGTERM handler): ours goes back on top, and calls theirs after cleaning up.
    """
    global _started_in
    with _lock:
        first, _started_in = _started_in != os.getpid(), os.getpid()
    if first:
        sweep()
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            previous = signal.getsignal(signum)
            if previous is not signal.SIG_IGN and not getattr(previous, "scibench_cleanup", False):
                signal.signal(signum, _on_signal(previous))
    if first and os.environ.get("DVC_STAGE"):
        die_with_parent(signal.SIGTERM)


def die_with_parent(signum: int, parent: int | None = None) -> None:
    """Have the kernel send `signum` to this process when its parent exits (prctl PR_SET_PDEATHSIG).

    The signal is tied to the parent *thread* that started this process. A parent that was gone
    before the request (this process was reparented already; `parent`: the pid expected) gets
    the signal sent here at once.
    """
    expected = os.getppid() if parent is None else parent
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != expected:
        os.kill(os.getpid(), signum)


def stopping() -> bool:
    """Whether this process got a stop signal: what its runs return now is not a result."""
    return _stopping


def track(proc: subprocess.Popen) -> None:
    """Register a live sandbox (its own process group), to be killed if the harness is stopped."""
    with _lock:
        _live.add(proc)


def untrack(proc: subprocess.Popen) -> None:
    """The sandbox ended."""
    with _lock:
        _live.discard(proc)


def clean_up_own() -> Debris:
    """Kill this process's live sandboxes and remove every folder and cgroup tagged with its tag.

    Other threads may still be between making a folder and starting its run (`stopping()` keeps
    them from starting one); a second and third pass take what they made meanwhile.
    """
    with _lock:
        live = list(_live)
    for proc in live:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    removed = Debris()
    for _ in range(3):
        found = remove(find(owner=owner_tag()))
        if not found:
            break
        removed.folders += found.folders
        removed.cgroups += found.cgroups
        removed.killed += found.killed
    return removed


def _on_signal(previous):
    installer = os.getpid()

    def handler(signum, frame):
        global _stopping
        if os.getpid() == installer:  # a forked child inherits the handler, not the sandboxes
            _stopping = True
            clean_up_own()
        if callable(previous):
            previous(signum, frame)
            return
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    handler.scibench_cleanup = True
    return handler


def default_temp_dirs() -> tuple[Path, ...]:
    """Where harnesses make their folders: the temp directory, /tmp and /var/tmp."""
    return tuple(dict.fromkeys(Path(p) for p in (tempfile.gettempdir(), "/tmp", "/var/tmp")))


def cgroup_dirs(root: Path) -> list[Path]:
    """Directories named `scibench-*` in every hierarchy under `root`, a few levels deep."""
    found: list[Path] = []
    base = len(root.parts)
    for top, dirs, _ in os.walk(root):
        depth = len(Path(top).parts) - base
        if depth >= _CGROUP_DEPTH:
            dirs[:] = []
        named = [d for d in dirs if d.startswith("scibench-")]
        found += [Path(top) / d for d in named]
        dirs[:] = [d for d in dirs if d not in named]
    return sorted(found)
