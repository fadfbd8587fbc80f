"""Specification of stages/sandbox/cgroups.py on this machine: /proc/self/cgroup and the real tree.

`_own_paths` reads a process's place in each hierarchy (co-mounted controllers, paths with colons,
and this process's own lines). Then, as root, a per-run group made on the real cgroup tree: it holds
its limits and the processes that enter it, counts CPU time and refused forks, kills a process over
its memory total, and its removal kills what is left. The real-group tests skip without root or
without a writable hierarchy with the memory, pids and cpu controllers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest import MonkeyPatch

from stages.sandbox import cgroups
from stages.sandbox.cgroups import Cgroup, Totals, create
from stages.sandbox.command import enter_cgroups


def test_own_paths_of_co_mounted_controllers_and_paths_with_colons(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    fake = tmp_path / "cgroup"
    fake.write_text("12:cpu,cpuacct:/run:1/harness\n3:name=systemd:/user.slice\n0::/user.slice/a:b.scope\n")
    monkeypatch.setattr(cgroups, "Path", lambda path: fake if path == "/proc/self/cgroup" else Path(path))
    assert cgroups._own_paths() == {"cpu": "/run:1/harness", "cpuacct": "/run:1/harness",
                                    "name=systemd": "/user.slice", "": "/user.slice/a:b.scope"}


def test_own_paths_reads_this_process_cgroup_lines() -> None:
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    paths = cgroups._own_paths()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            assert paths[controller] == path
    assert len(paths) == sum(len(line.split(":", 2)[1].split(",")) for line in lines)


# --- the real cgroup tree (root only) ---


@pytest.fixture
def real_group() -> Iterator[Cgroup]:
    if os.geteuid() != 0:
        pytest.skip("a per-run cgroup is only made for a harness running as root")
    # Room for an interpreter that imports this project (and, under mutmut, mutmut itself).
    group = create(Totals(memory_bytes=256 << 20, processes=8, cpu_cores=0.5, cpu_seconds=0.2))
    if group is None:
        pytest.skip("no writable cgroup hierarchy with the memory, pids and cpu controllers here")
    yield group
    group.remove()
    for path in group.dirs.values():
        if path.exists():
            os.rmdir(path)


def in_group(group: Cgroup, code: str) -> subprocess.CompletedProcess[str]:
    argv = enter_cgroups(group.procs_files) + [sys.executable, "-c", code]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})


def test_real_group_holds_its_limits_and_the_processes_that_enter(real_group: Cgroup) -> None:
    dirs = real_group.dirs
    if real_group.version == 1:
        assert (dirs["memory"] / "memory.limit_in_bytes").read_text() == f"{256 << 20}\n"
        assert (dirs["pids"] / "pids.max").read_text() == "8\n"
        assert (dirs["cpu"] / "cpu.cfs_quota_us").read_text() == "50000\n"
        assert (dirs["cpu"] / "cpu.cfs_period_us").read_text() == "100000\n"
    else:
        assert (dirs["unified"] / "memory.max").read_text() == f"{256 << 20}\n"
        assert (dirs["unified"] / "cpu.max").read_text() == "50000 100000\n"
    code = "import json; from stages.sandbox import cgroups; print(json.dumps(cgroups._own_paths()))"
    done = in_group(real_group, code)
    assert done.returncode == 0, done.stderr
    inside = json.loads(done.stdout)
    for controller, path in dirs.items():
        # The path /proc/self/cgroup names is the group's place in its hierarchy.
        mount = next(m for m in (cgroups.ROOT / controller, cgroups.ROOT / "unified", cgroups.ROOT)
                     if path.is_relative_to(m.resolve()))
        assert inside["" if controller == "unified" else controller] == f"/{path.relative_to(mount.resolve())}"
    assert real_group.limits_hit() == []


def test_real_group_counts_cpu_time_and_refused_forks(real_group: Cgroup) -> None:
    code = """
import os, time
end = time.process_time() + 0.3
while time.process_time() < end:
    pass
children = []
try:
    for _ in range(20):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        children.append(pid)
except OSError as error:
    print(len(children), error.strerror)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"""
    done = in_group(real_group, code)
    # 8 in all: this program is one of them.
    assert (done.returncode, done.stdout) == (0, "7 Resource temporarily unavailable\n"), done.stderr
    assert real_group.cpu_seconds_used() >= 0.3
    assert real_group.over_cpu_budget()
    assert real_group.limits_hit() == ["pids", "cpu"]


def test_real_group_kills_a_process_over_its_memory_total(real_group: Cgroup) -> None:
    done = in_group(real_group, "block = bytearray(512 << 20)\nfor i in range(0, len(block), 4096): block[i] = 1")
    assert done.returncode == -9
    assert real_group.limits_hit() == ["memory"]


def test_real_group_remove_kills_what_is_left_and_removes_the_directories(real_group: Cgroup) -> None:
    lingering = subprocess.Popen(enter_cgroups(real_group.procs_files) + ["sleep", "60"])
    procs = real_group.procs_files[0]
    for _ in range(3000):  # until the launcher has moved itself in
        if str(lingering.pid) in procs.read_text().split():
            break
        lingering.poll()
    assert str(lingering.pid) in procs.read_text().split()
    real_group.remove()
    assert lingering.wait(timeout=30) == -9
    assert not any(path.exists() for path in real_group.dirs.values())
