"""Specification of stages/sandbox/cgroups.py `create` on a fake cgroup v1 tree.

One group per controller (memory, pids, cpu, cpuacct) under the harness's own, each limit written;
swap limited too where the kernel accounts it (and a refusal of that limit is no failure); cpu and
cpuacct mounted together as one hierarchy; and a layout that lacks a controller, or a group or limit
the kernel refuses, leaves nothing behind. The fake tree is cgroup_fakes.py's, through the `fs`
fixture of conftest.py.
"""

from __future__ import annotations

import errno
from pathlib import Path

from pytest import MonkeyPatch
from sandbox.cgroup_fakes import NAME, TOTALS, V1_FILES, V1_OWN, FakeCgroupfs, own_paths

from stages.sandbox.cgroups import Cgroup, create


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
