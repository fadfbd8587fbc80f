"""The fake cgroup tree the test_cgroups_*.py modules run `create` on, and their shared helpers.

`FakeCgroupfs` acts as cgroupfs does for mkdir and rmdir under tmp_path (the `fs` fixture of
conftest.py makes one, with a fixed uuid); `V1_FILES` and `V2_FILES` are the control files the kernel
makes in a new group; `own_paths` stands in for /proc/self/cgroup; `v1_group` and `v2_group` make a
group on a plain v1 or v2 layout for the tests of what a made group does.
"""

from __future__ import annotations

import errno
from pathlib import Path

from pytest import MonkeyPatch

from stages.sandbox import cgroups, debris
from stages.sandbox.cgroups import Cgroup, Totals, create

TOTALS = Totals(memory_bytes=64 << 20, processes=32, cpu_cores=1.5, cpu_seconds=2.0)
NAME = f"scibench-{debris.owner_tag()}-0123456789ab"

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


def own_paths(monkeypatch: MonkeyPatch, paths: dict[str, str]) -> None:
    monkeypatch.setattr(cgroups, "_own_paths", lambda: paths)


# A group name may start with any character, a slash's neighbours included.
V1_OWN = {"memory": "/X-harness", "pids": "/", "cpu": "/", "cpuacct": "/", "name=systemd": "/", "": "/"}


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
