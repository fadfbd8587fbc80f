"""Specification of stages/sandbox/cgroups.py, on a fake cgroup tree and (as root) on the real one."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest import MonkeyPatch

from stages.sandbox import cgroups
from stages.sandbox.cgroups import Cgroup, Totals, _keyed, _pids, _read, create
from stages.sandbox.command import enter_cgroups

TOTALS = Totals(memory_bytes=64 << 20, processes=32, cpu_cores=1.5, cpu_seconds=2.0)
NAME = f"scibench-{os.getpid()}-0123456789ab"

# The control files the kernel makes in every new cgroup directory, with their initial content.
V1_FILES = {
    "memory": {"cgroup.procs": "", "memory.limit_in_bytes": "9223372036854771712\n",
               "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"},
    "pids": {"cgroup.procs": "", "pids.max": "max\n", "pids.events": "max 0\n"},
    "cpu": {"cgroup.procs": "", "cpu.cfs_period_us": "100000\n", "cpu.cfs_quota_us": "-1\n"},
    "cpuacct": {"cgroup.procs": "", "cpuacct.usage": "0\n"},
}
V2_FILES = {"cgroup.procs": "", "cgroup.controllers": "", "cgroup.subtree_control": "", "memory.max": "max\n",
            "memory.swap.max": "max\n",
            "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n", "pids.max": "max\n",
            "pids.events": "max 0\n", "cpu.max": "max 100000\n", "cpu.stat": "usage_usec 0\n"}


class FakeCgroupfs:
    """A tree under tmp_path that acts as cgroupfs does for mkdir and rmdir.

    mkdir makes the new group's control files (v1: by the hierarchy's top directory; v2: all),
    rmdir removes them with the directory, and refuses with EBUSY as often as `busy` says.
    """

    def __init__(self, root: Path, monkeypatch: MonkeyPatch):
        self.root = root
        self.extra: dict[str, str] = {}  # control files present in every new group, e.g. memsw
        self.busy: dict[Path, int] = {}
        self.rmdirs: list[Path] = []
        real_mkdir, real_rmdir, real_write = Path.mkdir, Path.rmdir, Path.write_text

        def mkdir(path: Path, *args, **kwargs) -> None:
            real_mkdir(path, *args, **kwargs)
            if path.is_relative_to(root) and path.name.startswith("scibench-"):
                top = path.relative_to(root).parts[0]
                for name, text in {**V1_FILES.get(top, V2_FILES), **self.extra}.items():
                    real_write(path / name, text)

        def rmdir(path: Path) -> None:
            if path.is_relative_to(root):
                self.rmdirs.append(path)
                if self.busy.get(path, 0) > 0:
                    self.busy[path] -= 1
                    raise OSError(errno.EBUSY, "Device or resource busy")
                if path.is_dir():
                    for child in path.iterdir():
                        if child.is_file():
                            child.unlink()
            real_rmdir(path)

        monkeypatch.setattr(Path, "mkdir", mkdir)
        monkeypatch.setattr(Path, "rmdir", rmdir)

    def v1(self, *controllers: str) -> None:
        for controller in controllers:
            (self.root / controller).mkdir(parents=True)
            (self.root / controller / "cgroup.procs").write_text("1\n")

    def v2(self, mount: Path, subtree: dict[str, str]) -> None:
        """A cgroup2 mount at `mount` whose groups (relative paths) delegate the given controllers."""
        mount.mkdir(parents=True, exist_ok=True)
        (mount / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
        for group, controllers in subtree.items():
            (mount / group).mkdir(parents=True, exist_ok=True)
            (mount / group / "cgroup.subtree_control").write_text(controllers + "\n")

    def texts(self, directory: Path) -> dict[str, str]:
        return {path.name: path.read_text() for path in sorted(directory.iterdir())}


@pytest.fixture
def fs(tmp_path: Path, monkeypatch: MonkeyPatch) -> FakeCgroupfs:
    fixed = uuid.UUID("0123456789abcdef0123456789abcdef")
    monkeypatch.setattr(cgroups, "uuid", SimpleNamespace(uuid4=lambda: fixed))
    return FakeCgroupfs(tmp_path / "cgroup", monkeypatch)


def own_paths(monkeypatch: MonkeyPatch, paths: dict[str, str]) -> None:
    monkeypatch.setattr(cgroups, "_own_paths", lambda: paths)


# A group name may start with any character, a slash's neighbours included.
V1_OWN = {"memory": "/X-harness", "pids": "/", "cpu": "/", "cpuacct": "/", "name=systemd": "/", "": "/"}


def test_v1_makes_one_group_per_controller_under_the_harness_own_with_the_totals(
    fs: FakeCgroupfs, monkeypatch: MonkeyPatch
) -> None:
    fs.v1("memory", "pids", "cpu", "cpuacct", "blkio")
    (fs.root / "memory" / "X-harness").mkdir()
    own_paths(monkeypatch, V1_OWN)
    group = create(TOTALS, fs.root)
    assert group == Cgroup(1, {"memory": fs.root / "memory" / "X-harness" / NAME, "pids": fs.root / "pids" / NAME,
                               "cpu": fs.root / "cpu" / NAME, "cpuacct": fs.root / "cpuacct" / NAME}, TOTALS)
    assert fs.texts(group.dirs["memory"]) == {
        "cgroup.procs": "", "memory.limit_in_bytes": str(64 << 20),
        "memory.oom_control": V1_FILES["memory"]["memory.oom_control"]}
    assert fs.texts(group.dirs["pids"]) == {"cgroup.procs": "", "pids.events": "max 0\n", "pids.max": "32"}
    assert fs.texts(group.dirs["cpu"]) == {"cgroup.procs": "", "cpu.cfs_period_us": "100000",
                                           "cpu.cfs_quota_us": "150000"}
    assert group.procs_files == [group.dirs[c] / "cgroup.procs" for c in ("memory", "pids", "cpu", "cpuacct")]


def test_v1_controllers_missing_from_proc_self_cgroup_are_at_the_mount_top(
    fs: FakeCgroupfs, monkeypatch: MonkeyPatch
) -> None:
    fs.v1("memory", "pids", "cpu", "cpuacct")
    own_paths(monkeypatch, {})
    group = create(TOTALS, fs.root)
    assert group is not None
    assert group.dirs == {c: fs.root / c / NAME for c in ("memory", "pids", "cpu", "cpuacct")}


def test_v1_limits_swap_too_when_it_is_accounted(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    fs.v1("memory", "pids", "cpu", "cpuacct")
    fs.extra = {"memory.memsw.limit_in_bytes": "9223372036854771712\n"}
    own_paths(monkeypatch, V1_OWN | {"memory": "/"})
    group = create(TOTALS, fs.root)
    assert group is not None
    assert (group.dirs["memory"] / "memory.memsw.limit_in_bytes").read_text() == str(64 << 20)


def test_v1_swap_limit_refused_by_the_kernel_is_not_a_failure(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    fs.v1("memory", "pids", "cpu", "cpuacct")
    fs.extra = {"memory.memsw.limit_in_bytes": "9223372036854771712\n"}
    own_paths(monkeypatch, V1_OWN | {"memory": "/"})
    real_write = Path.write_text

    def refuse_memsw(path: Path, text: str, *args, **kwargs) -> int:
        if path.name == "memory.memsw.limit_in_bytes" and text == str(64 << 20):
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_write(path, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", refuse_memsw)
    group = create(TOTALS, fs.root)
    assert group is not None and group.version == 1
    assert (group.dirs["pids"] / "pids.max").read_text() == "32"


def test_v1_with_cpu_and_cpuacct_mounted_together(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    # The usual v1 layout: cpu and cpuacct are symlinks to one "cpu,cpuacct" hierarchy.
    fs.v1("memory", "pids", "cpu,cpuacct")
    (fs.root / "cpu").symlink_to("cpu,cpuacct")
    (fs.root / "cpuacct").symlink_to("cpu,cpuacct")
    monkeypatch.setitem(V1_FILES, "cpu,cpuacct", V1_FILES["cpu"] | V1_FILES["cpuacct"])
    own_paths(monkeypatch, {"memory": "/", "pids": "/", "cpu": "/", "cpuacct": "/"})
    group = create(TOTALS, fs.root)
    assert group is not None
    shared = fs.root / "cpu,cpuacct" / NAME
    assert (group.dirs["cpu"], group.dirs["cpuacct"]) == (shared, shared)
    assert group.procs_files == [fs.root / "memory" / NAME / "cgroup.procs", fs.root / "pids" / NAME / "cgroup.procs",
                                 shared / "cgroup.procs"]
    assert (shared / "cpu.cfs_quota_us").read_text() == "150000"
    group.remove()
    assert sorted(p.name for p in (fs.root / "cpu,cpuacct").iterdir()) == ["cgroup.procs"]


def test_v1_co_mounted_a_refused_limit_removes_the_shared_group_once(
    fs: FakeCgroupfs, monkeypatch: MonkeyPatch
) -> None:
    fs.v1("memory", "pids", "cpu,cpuacct")
    (fs.root / "cpu").symlink_to("cpu,cpuacct")
    (fs.root / "cpuacct").symlink_to("cpu,cpuacct")
    monkeypatch.setitem(V1_FILES, "cpu,cpuacct", V1_FILES["cpu"] | V1_FILES["cpuacct"])
    own_paths(monkeypatch, {})
    real_write = Path.write_text

    def refuse_quota(path: Path, text: str, *args, **kwargs) -> int:
        if path.name == "cpu.cfs_quota_us" and path.parent.name == NAME:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_write(path, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", refuse_quota)
    assert create(TOTALS, fs.root) is None
    for hierarchy in ("memory", "pids", "cpu,cpuacct"):
        assert [p.name for p in (fs.root / hierarchy).iterdir()] == ["cgroup.procs"]


def test_v1_needs_all_four_controllers(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    fs.v1("memory", "pids", "cpu")
    own_paths(monkeypatch, V1_OWN)
    assert create(TOTALS, fs.root) is None
    assert [p.name for p in (fs.root / "memory").iterdir()] == ["cgroup.procs"]


def test_v1_a_group_that_cannot_be_made_leaves_nothing_behind(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    fs.v1("memory", "pids", "cpu", "cpuacct")
    own_paths(monkeypatch, V1_OWN | {"memory": "/", "cpu": "/gone"})  # the cpu parent does not exist
    assert create(TOTALS, fs.root) is None
    for controller in ("memory", "pids", "cpu", "cpuacct"):
        assert [p.name for p in (fs.root / controller).iterdir()] == ["cgroup.procs"]
    assert fs.rmdirs == [fs.root / "memory" / NAME, fs.root / "pids" / NAME]


def test_v1_a_refused_limit_removes_every_group_made(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    fs.v1("memory", "pids", "cpu", "cpuacct")
    own_paths(monkeypatch, V1_OWN | {"memory": "/"})
    real_write = Path.write_text

    def refuse_quota(path: Path, text: str, *args, **kwargs) -> int:
        if path.name == "cpu.cfs_quota_us" and path.parent.name == NAME:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_write(path, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", refuse_quota)
    assert create(TOTALS, fs.root) is None
    for controller in ("memory", "pids", "cpu", "cpuacct"):
        assert [p.name for p in (fs.root / controller).iterdir()] == ["cgroup.procs"]


def test_v2_makes_the_group_under_the_harness_when_it_delegates(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    fs.v2(fs.root, {".": "cpu memory pids", "X-harness": "cpuset cpu io memory pids"})
    own_paths(monkeypatch, {"": "/X-harness"})
    group = create(TOTALS, fs.root)
    path = fs.root / "X-harness" / NAME
    assert group == Cgroup(2, {"unified": path}, TOTALS)
    assert group.procs_files == [path / "cgroup.procs"]
    written = fs.texts(path)
    assert {key: written[key] for key in ("memory.max", "memory.swap.max", "pids.max", "cpu.max")} == {
        "memory.max": str(64 << 20), "memory.swap.max": "0", "pids.max": "32", "cpu.max": "150000 100000"}


def test_v2_makes_the_group_beside_a_harness_that_cannot_delegate(
    fs: FakeCgroupfs, monkeypatch: MonkeyPatch
) -> None:
    fs.v2(fs.root, {".": "memory pids cpu", "service/harness": "memory pids"})
    (fs.root / "service" / "cgroup.subtree_control").write_text("cpu io memory pids\n")
    own_paths(monkeypatch, {"": "/service/harness"})
    group = create(TOTALS, fs.root)
    assert group is not None and group.dirs == {"unified": fs.root / "service" / NAME}


def test_v2_without_a_swap_file_limits_memory_only(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    fs.v2(fs.root, {".": "cpu memory pids"})
    own_paths(monkeypatch, {"": "/"})
    real_mkdir = Path.mkdir

    def no_swap(path: Path, *args, **kwargs) -> None:  # a kernel without swap accounting
        real_mkdir(path, *args, **kwargs)
        (path / "memory.swap.max").unlink()

    monkeypatch.setattr(Path, "mkdir", no_swap)
    group = create(TOTALS, fs.root)
    assert group is not None
    assert not (group.dirs["unified"] / "memory.swap.max").exists()
    assert (group.dirs["unified"] / "memory.max").read_text() == str(64 << 20)


def test_v2_at_the_mount_top_when_proc_self_cgroup_has_no_v2_line(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    fs.v2(fs.root, {".": "cpu memory pids"})
    own_paths(monkeypatch, {"memory": "/harness"})
    group = create(TOTALS, fs.root)
    assert group is not None and group.dirs == {"unified": fs.root / NAME}


def test_hybrid_v2_in_unified_is_used_when_it_delegates(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    fs.v1("memory", "pids", "cpu", "cpuacct")
    fs.v2(fs.root / "unified", {".": "cpu memory pids"})
    own_paths(monkeypatch, V1_OWN)
    group = create(TOTALS, fs.root)
    assert group is not None and group.dirs == {"unified": fs.root / "unified" / NAME}


def test_hybrid_without_v2_controllers_falls_back_to_v1(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    # This machine's layout: a controller-less cgroup2 at unified/, the controllers on v1.
    fs.v1("memory", "pids", "cpu", "cpuacct")
    fs.v2(fs.root / "unified", {".": ""})
    own_paths(monkeypatch, V1_OWN | {"memory": "/"})
    group = create(TOTALS, fs.root)
    assert group is not None and group.version == 1


@pytest.mark.parametrize("subtree", ["", "memory pids", "cpu pids", "cpu memory"])
def test_v2_needs_memory_pids_and_cpu_delegated(fs: FakeCgroupfs, monkeypatch: MonkeyPatch, subtree: str) -> None:
    fs.v2(fs.root, {".": subtree})
    own_paths(monkeypatch, {"": "/"})
    assert create(TOTALS, fs.root) is None
    assert sorted(p.name for p in fs.root.iterdir()) == ["cgroup.controllers", "cgroup.subtree_control"]


def test_v2_a_refused_limit_removes_the_group(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    fs.v2(fs.root, {".": "cpu memory pids"})
    own_paths(monkeypatch, {"": "/"})
    real_write = Path.write_text

    def refuse_pids(path: Path, text: str, *args, **kwargs) -> int:
        if path.name == "pids.max" and path.parent.name == NAME:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_write(path, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", refuse_pids)
    assert create(TOTALS, fs.root) is None
    assert not (fs.root / NAME).exists()


def test_no_cgroup_filesystem_at_all(tmp_path: Path) -> None:
    assert create(TOTALS, tmp_path) is None
    assert list(tmp_path.iterdir()) == []


def test_each_run_gets_its_own_name(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "uuid", uuid)
    fs.v2(fs.root, {".": "cpu memory pids"})
    own_paths(monkeypatch, {"": "/"})
    first, second = create(TOTALS, fs.root), create(TOTALS, fs.root)
    assert first is not None and second is not None
    names = [first.dirs["unified"].name, second.dirs["unified"].name]
    assert names[0] != names[1]
    assert all(re.fullmatch(rf"scibench-{os.getpid()}-[0-9a-f]{{12}}", name) for name in names)


def v1_group(fs: FakeCgroupfs, monkeypatch: MonkeyPatch, totals: Totals = TOTALS) -> Cgroup:
    fs.v1("memory", "pids", "cpu", "cpuacct")
    own_paths(monkeypatch, {})
    group = create(totals, fs.root)
    assert group is not None
    return group


def v2_group(fs: FakeCgroupfs, monkeypatch: MonkeyPatch, totals: Totals = TOTALS) -> Cgroup:
    fs.v2(fs.root, {".": "cpu memory pids"})
    own_paths(monkeypatch, {"": "/"})
    group = create(totals, fs.root)
    assert group is not None
    return group


def test_v1_counters_name_the_limits_the_kernel_enforced(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    assert group.limits_hit() == []
    (group.dirs["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    assert group.limits_hit() == ["memory"]
    (group.dirs["pids"] / "pids.events").write_text("max 3\n")
    assert group.limits_hit() == ["memory", "pids"]
    (group.dirs["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 1\noom_kill 0\n")
    assert group.limits_hit() == ["pids"]


def test_v2_counters_name_the_limits_the_kernel_enforced(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    events = group.dirs["unified"] / "memory.events"
    assert group.limits_hit() == []
    events.write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 0\n")  # pressure, but nothing killed
    assert group.limits_hit() == []
    events.write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 2\n")
    assert group.limits_hit() == ["memory"]
    (group.dirs["unified"] / "pids.events").write_text("max 1\n")
    assert group.limits_hit() == ["memory", "pids"]


def test_v2_counters_a_kernel_does_not_keep_read_as_nothing_hit(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    (group.dirs["unified"] / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\n")  # before Linux 4.13
    (group.dirs["unified"] / "pids.events").unlink()
    assert group.limits_hit() == []


def test_counters_of_a_removed_group_read_as_nothing_hit(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    group.remove()
    assert group.limits_hit() == []
    assert group.cpu_seconds_used() == 0.0


def test_v1_cpu_time_is_cpuacct_usage_in_nanoseconds(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    assert group.cpu_seconds_used() == 0.0
    (group.dirs["cpuacct"] / "cpuacct.usage").write_text("2500000000\n")
    assert group.cpu_seconds_used() == 2.5


def test_v2_cpu_time_is_cpu_stat_usage_in_microseconds(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    assert group.cpu_seconds_used() == 0.0
    (group.dirs["unified"] / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
    assert group.cpu_seconds_used() == 1.5
    (group.dirs["unified"] / "cpu.stat").write_text("user_usec 1000000\n")
    assert group.cpu_seconds_used() == 0.0


def test_the_cpu_budget_is_passed_strictly_and_stays_passed(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)  # 2.0 CPU seconds
    usage = group.dirs["cpuacct"] / "cpuacct.usage"
    usage.write_text("2000000000\n")
    assert (group.over_cpu_budget(), group.limits_hit()) == (False, [])
    usage.write_text("2000000001\n")
    assert (group.over_cpu_budget(), group.limits_hit()) == (True, ["cpu"])
    usage.write_text("0\n")
    assert (group.over_cpu_budget(), group.limits_hit()) == (True, ["cpu"])
    (group.dirs["memory"] / "memory.oom_control").write_text("oom_kill 1\n")
    (group.dirs["pids"] / "pids.events").write_text("max 1\n")
    assert group.limits_hit() == ["memory", "pids", "cpu"]


def test_remove_takes_every_directory_away(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    group.remove()
    assert not any(path.exists() for path in group.dirs.values())
    group.remove()  # twice is harmless


def test_remove_waits_out_a_busy_directory(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    path = group.dirs["unified"]
    fs.busy[path] = 3
    sleeps: list[float] = []
    monkeypatch.setattr(cgroups, "time", SimpleNamespace(sleep=sleeps.append))
    group.remove()
    assert not path.exists()
    assert (fs.rmdirs, sleeps) == ([path] * 4, [0.01] * 3)


def test_remove_goes_on_past_a_directory_already_gone(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    group.dirs["memory"].rmdir()
    group.remove()
    assert not any(path.exists() for path in group.dirs.values())


def test_remove_gives_up_on_a_directory_that_stays_busy(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    monkeypatch.setattr(cgroups, "time", SimpleNamespace(sleep=lambda seconds: None))
    fs.busy[group.dirs["memory"]] = 1000
    group.remove()
    assert fs.rmdirs.count(group.dirs["memory"]) == 100
    assert group.dirs["memory"].exists()
    assert not any(group.dirs[c].exists() for c in ("pids", "cpu", "cpuacct"))


def test_kill_all_kills_every_listed_process(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    procs = group.dirs["unified"] / "cgroup.procs"
    procs.write_text("".join(f"{p.pid}\n" for p in sleepers))
    rounds = []

    def kernel_reaps(seconds: float) -> None:  # the kernel drops dead processes from cgroup.procs
        rounds.append(seconds)
        for sleeper in sleepers:
            sleeper.wait(timeout=30)
        procs.write_text("")

    monkeypatch.setattr(cgroups, "time", SimpleNamespace(sleep=kernel_reaps))
    group.kill_all()
    assert [sleeper.returncode for sleeper in sleepers] == [-9, -9]
    assert rounds == [0.02]


def test_kill_all_passes_over_a_process_it_may_not_signal(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    (group.dirs["unified"] / "cgroup.procs").write_text("4242\n")

    def refuse(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(cgroups, "os", SimpleNamespace(kill=refuse))
    monkeypatch.setattr(cgroups, "time", SimpleNamespace(sleep=lambda seconds: None))
    group.kill_all()


def test_kill_all_gives_up_after_fifty_rounds(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    (group.dirs["unified"] / "cgroup.procs").write_text("999999999\n")  # no such process, never leaves
    rounds = []
    monkeypatch.setattr(cgroups, "time", SimpleNamespace(sleep=rounds.append))
    group.kill_all()
    assert rounds == [0.02] * 50


def test_keyed_reads_key_value_lines_with_integer_values(tmp_path: Path) -> None:
    path = tmp_path / "memory.events"
    path.write_text("oom_kill_disable 0\nunder_oom 1\noom_kill 12\nmax max\nthree fields 3\n\nquota -1\nlonely\n")
    path.write_text(path.read_text() + "unlimited X1\n")
    assert _keyed(path) == {"oom_kill_disable": 0, "under_oom": 1, "oom_kill": 12, "quota": -1}
    assert _keyed(tmp_path / "absent") == {}


def test_read_and_pids_of_absent_or_odd_files(tmp_path: Path) -> None:
    path = tmp_path / "cgroup.procs"
    path.write_text("12\n345\n\nx\n")
    assert _pids(path) == [12, 345]
    assert _read(path) == "12\n345\n\nx\n"
    assert _read(tmp_path / "absent") == ""
    assert _pids(tmp_path / "absent") == []


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
