"""Per-run cgroups: memory, process and CPU totals over every process of one sandboxed run.

rlimits bind one process each (four processes under a 2 GiB address-space limit hold 8 GiB), and
RLIMIT_NPROC counts a uid's processes across the host. A cgroup holds the whole run instead.

- cgroup v1 (controllers mounted at /sys/fs/cgroup/<controller>): a child of the harness's own
  cgroup in `memory` (memory.limit_in_bytes, and memsw when swap is accounted), `pids`
  (pids.max), `cpu` (CFS quota: at most `cpu_cores` cores) and `cpuacct` (CPU time used).
- cgroup v2 (/sys/fs/cgroup is cgroup2, or its `unified` mount has the controllers): memory.max,
  memory.swap.max, pids.max, cpu.max; CPU time from cpu.stat. v2 only allows controllers below a
  cgroup without processes, so the run's cgroup is made beside the harness, under its parent,
  when the harness's own cgroup cannot delegate.
- Neither (an ordinary user without a delegated cgroup, or a read-only cgroupfs): `create` returns
  None and the run keeps per-process rlimits only; the result records that no totals held.

The program is moved in by the launcher before bwrap starts (`echo 0 > cgroup.procs`), so every
process of the run starts inside. `Cgroup.limits_hit` reads the kernel's own counters: an OOM kill,
a refused fork, CPU time over the budget.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from stages.sandbox.owner import owner_tag

ROOT = Path("/sys/fs/cgroup")
CFS_PERIOD_US = 100_000
_V1 = ("memory", "pids", "cpu", "cpuacct")


@dataclass(frozen=True)
class Totals:
    """What one run may use in all: bytes of memory, processes, cores and CPU seconds."""

    memory_bytes: int
    processes: int
    cpu_cores: float
    cpu_seconds: float


@dataclass
class Cgroup:
    """The cgroup directories of one run (one per v1 controller, or one v2 directory)."""

    version: int
    dirs: dict[str, Path]  # controller -> directory ("unified" for v2)
    totals: Totals
    _cpu_budget_hit: bool = field(default=False, repr=False)

    @property
    def procs_files(self) -> list[Path]:
        """The `cgroup.procs` files the launcher writes itself into."""
        return [path / "cgroup.procs" for path in dict.fromkeys(self.dirs.values())]

    def cpu_seconds_used(self) -> float:
        """CPU time used by every process of the run so far."""
        if self.version == 1:
            return int(_read(self.dirs["cpuacct"] / "cpuacct.usage") or 0) / 1e9
        stat = _keyed(self.dirs["unified"] / "cpu.stat")
        return stat.get("usage_usec", 0) / 1e6

    def over_cpu_budget(self) -> bool:
        """Whether the run's CPU time passed its total (remembered for `limits_hit`)."""
        if self.cpu_seconds_used() > self.totals.cpu_seconds:
            self._cpu_budget_hit = True
        return self._cpu_budget_hit

    def events(self) -> dict[str, int]:
        """How often the kernel enforced each total so far: `memory` (OOM kills), `pids` (forks refused)."""
        if self.version == 1:
            oom = _keyed(self.dirs["memory"] / "memory.oom_control").get("oom_kill", 0)
            forks = _keyed(self.dirs["pids"] / "pids.events").get("max", 0)
        else:
            oom = _keyed(self.dirs["unified"] / "memory.events").get("oom_kill", 0)
            forks = _keyed(self.dirs["unified"] / "pids.events").get("max", 0)
        return {"memory": oom, "pids": forks}

    def limits_hit(self) -> list[str]:
        """Which totals the kernel enforced during the run: `memory`, `pids`, `cpu`."""
        hit = [name for name, count in self.events().items() if count > 0]
        return hit + ["cpu"] * self._cpu_budget_hit

    def remove(self) -> None:
        """Kill what is left and remove the directories."""
        for path in dict.fromkeys(self.dirs.values()):
            kill_and_remove(path)


def kill_and_remove(path: Path) -> int:
    """SIGKILL every process in one cgroup directory, then remove it; returns how many were killed.

    None should be left when a run ends (its PID namespace ends with it); a killed harness's
    cgroups may still hold a process, and `debris.sweep` removes them through here.
    """
    killed = kill_all(path)
    for _ in range(100):
        try:
            path.rmdir()
            break
        except FileNotFoundError:
            break
        except OSError:  # EBUSY while the last exiting task is being reaped
            time.sleep(0.01)
    return len(killed)


def kill_all(path: Path) -> set[int]:
    """SIGKILL the processes listed in `path/cgroup.procs` until none is left (at most 50 rounds)."""
    killed: set[int] = set()
    for _ in range(50):
        pids = set(_pids(path / "cgroup.procs"))
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed |= pids
        time.sleep(0.02)
    return killed


def create(totals: Totals, root: Path = ROOT) -> Cgroup | None:
    """Make the run's cgroup with its totals, or return None when none can be made here."""
    name = f"scibench-{owner_tag()}-{uuid.uuid4().hex[:12]}"  # whose run it was (debris.py sweeps by it)
    for make in (_create_v2, _create_v1):
        with contextlib.suppress(OSError):
            group = make(totals, root, name)
            if group is not None:
                return group
    return None


def _create_v1(totals: Totals, root: Path, name: str) -> Cgroup | None:
    own = _own_paths()
    # Resolved: cpu and cpuacct are often symlinks to one co-mounted `cpu,cpuacct` hierarchy.
    mounts = {c: (root / c).resolve() for c in _V1}
    if not all((mounts[c] / "cgroup.procs").exists() for c in _V1):
        return None
    dirs: dict[str, Path] = {}
    try:
        for controller in _V1:
            path = mounts[controller] / own.get(controller, "").lstrip("/") / name
            if path not in dirs.values():
                path.mkdir()
            dirs[controller] = path
        memory = dirs["memory"]
        (memory / "memory.limit_in_bytes").write_text(str(totals.memory_bytes))
        if (memory / "memory.memsw.limit_in_bytes").exists():
            with contextlib.suppress(OSError):  # present but refused when swap is not accounted
                (memory / "memory.memsw.limit_in_bytes").write_text(str(totals.memory_bytes))
        (dirs["pids"] / "pids.max").write_text(str(totals.processes))
        (dirs["cpu"] / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
        (dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(int(totals.cpu_cores * CFS_PERIOD_US)))
    except OSError:
        for path in dirs.values():
            with contextlib.suppress(OSError):
                path.rmdir()
        raise
    return Cgroup(1, dirs, totals)


def _create_v2(totals: Totals, root: Path, name: str) -> Cgroup | None:
    for mount in (root, root / "unified"):
        if not (mount / "cgroup.controllers").exists():
            continue
        own = mount / _own_paths().get("", "/").lstrip("/")
        for parent in (own, own.parent):
            if {"memory", "pids", "cpu"} <= set(_read(parent / "cgroup.subtree_control").split()):
                path = parent / name
                path.mkdir()
                try:
                    (path / "memory.max").write_text(str(totals.memory_bytes))
                    if (path / "memory.swap.max").exists():
                        (path / "memory.swap.max").write_text("0")
                    (path / "pids.max").write_text(str(totals.processes))
                    quota = int(totals.cpu_cores * CFS_PERIOD_US)
                    (path / "cpu.max").write_text(f"{quota} {CFS_PERIOD_US}")
                except OSError:
                    path.rmdir()
                    raise
                return Cgroup(2, {"unified": path}, totals)
    return None


def _own_paths() -> dict[str, str]:
    """Map each controller to this process's cgroup path, from /proc/self/cgroup ("" for v2)."""
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            paths[controller] = path
    return paths


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _keyed(path: Path) -> dict[str, int]:
    """`key value` lines as a dict (memory.oom_control, pids.events, cpu.stat, ...)."""
    pairs = (line.split() for line in _read(path).splitlines())
    return {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].lstrip("-").isdigit()}


def _pids(procs: Path) -> list[int]:
    return [int(line) for line in _read(procs).split() if line.isdigit()]
