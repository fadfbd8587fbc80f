"""Specification of stages/sandbox/cgroups.py `create` on a fake cgroup v2 tree, hybrid or absent.

The group is made under the harness's own when that delegates memory, pids and cpu, beside it when
it cannot; swap is limited where the kernel has the file; a hybrid layout uses its unified/ tree only
when that delegates the controllers, v1 otherwise; without the three controllers, with a refused
limit, or with no cgroup filesystem at all, no group is made and nothing is left behind. Each run's
group has a name of its own. The fake tree is cgroup_fakes.py's, through the `fs` fixture of
conftest.py.
"""

from __future__ import annotations

import errno
import re
import uuid
from pathlib import Path

import pytest
from pytest import MonkeyPatch
from sandbox.cgroup_fakes import NAME, TOTALS, V1_OWN, FakeCgroupfs, own_paths

from stages.sandbox import cgroups, debris
from stages.sandbox.cgroups import Cgroup, create


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
    assert all(re.fullmatch(rf"scibench-{re.escape(debris.owner_tag())}-[0-9a-f]{{12}}", name) for name in names)
