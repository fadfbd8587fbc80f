"""Specification of stages/sandbox/filesystem.py: the exact mount arguments and generated /etc files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest import MonkeyPatch

from stages.sandbox import filesystem
from stages.sandbox.filesystem import Sizes, etc_files, mount_args, python_runtime_paths

SIZES = Sizes(work_bytes=10, tmp_bytes=20, shm_bytes=30)
MADE = (Path("/"), Path("/tmp"), Path("/dev"))


def parents_of(path: Path) -> list[str]:
    """`--perms 0755 --dir` for each parent bwrap would otherwise make 0700, shallowest first."""
    return [a for p in reversed(path.parents) if p not in MADE for a in ("--perms", "0755", "--dir", str(p))]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "data").mkdir(parents=True)
    (tmp_path / "ws" / "prompt.md").write_text("prompt")
    return tmp_path / "ws"


@pytest.fixture
def host(tmp_path: Path, monkeypatch: MonkeyPatch) -> Path:
    """A fake host's system directories (the real /usr and one more) and top-level entries: a merged-/usr
    symlink, a directory, a file, an absent one."""
    root = tmp_path / "host"
    root.mkdir()
    (root / "bin").symlink_to("usr/bin")
    (root / "lib").mkdir()
    (root / "file").write_text("")
    (root / "usr").mkdir()
    monkeypatch.setattr(filesystem, "SYSTEM_DIRS", ("/usr", str(root / "usr")))
    monkeypatch.setattr(filesystem, "SYSTEM_ENTRIES", tuple(str(root / n) for n in ("bin", "lib", "file", "absent")))
    monkeypatch.setattr(filesystem, "ETC_ENTRIES", ())
    return root


def test_the_whole_argument_list_in_order(ws: Path, host: Path, tmp_path: Path) -> None:
    venv = tmp_path / "runtime" / "venv"
    (venv / "secret").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    agent = tmp_path / "agent"
    agent.mkdir()
    args = mount_args(ws, agent_dir=tmp_path / "x" / ".." / "agent", runtime_paths=[venv],
                      hidden=[venv / "secret", tmp_path / "absent", tmp_path / "outside"], sizes=SIZES,
                      etc_fds={"passwd": 7, "group": 8})
    assert args == [
        "--ro-bind", "/usr", "/usr",
        "--ro-bind", f"{host}/usr", f"{host}/usr",
        "--symlink", "usr/bin", f"{host}/bin",
        "--ro-bind", f"{host}/lib", f"{host}/lib",
        "--perms", "0755", "--dir", "/etc",
        "--perms", "0644", "--ro-bind-data", "8", "/etc/group",
        "--perms", "0644", "--ro-bind-data", "7", "/etc/passwd",
        "--proc", "/proc", "--dev", "/dev",
        "--perms", "1777", "--size", "30", "--tmpfs", "/dev/shm",
        "--remount-ro", "/dev",
        "--perms", "1777", "--size", "20", "--tmpfs", "/tmp",
        *parents_of(venv), "--ro-bind", str(venv), str(venv),
        "--tmpfs", str(venv / "secret"),
        "--perms", "0755", "--dir", "/workspace",
        "--ro-bind", f"{ws}/prompt.md", "/workspace/prompt.md",
        "--ro-bind", f"{ws}/data", "/workspace/data",
        "--perms", "1777", "--size", "10", "--tmpfs", "/workspace/work",
        "--ro-bind", str(agent), "/agent",
        "--remount-ro", "/",
    ]


def test_without_an_agent_dir_nothing_is_at_agent(ws: Path, host: Path) -> None:
    args = mount_args(ws, agent_dir=None, runtime_paths=[], hidden=[], sizes=SIZES, etc_fds={})
    assert args[-11:] == ["--ro-bind", f"{ws}/data", "/workspace/data",
                          "--perms", "1777", "--size", "10", "--tmpfs", "/workspace/work", "--remount-ro", "/"]
    assert "/agent" not in args


def test_a_symlinked_workspace_is_bound_from_where_it_points(ws: Path, host: Path, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(ws)
    args = mount_args(tmp_path / "link", agent_dir=None, runtime_paths=[], hidden=[], sizes=SIZES, etc_fds={})
    assert args[-14:-8] == ["--ro-bind", f"{ws}/prompt.md", "/workspace/prompt.md",
                            "--ro-bind", f"{ws}/data", "/workspace/data"]


def etc_part(args: list[str]) -> list[str]:
    start = args.index("/etc") + 1
    return args[start: args.index("--proc")]


def test_etc_entries_are_bound_linked_or_left_out_as_on_the_host(
    ws: Path, host: Path, monkeypatch: MonkeyPatch
) -> None:
    kinds = {"ld.so.cache": Path("/etc/ld.so.cache").is_file(), "localtime": Path("/etc/localtime").is_symlink(),
             "ld.so.conf.d": Path("/etc/ld.so.conf.d").is_dir() and not Path("/etc/ld.so.conf.d").is_symlink()}
    if not all(kinds.values()):
        pytest.skip(f"this host's /etc lacks one of the kinds of entry the test uses: {kinds}")
    monkeypatch.setattr(filesystem, "ETC_ENTRIES", ("ld.so.cache", "localtime", "scibench-absent", "ld.so.conf.d"))
    args = mount_args(ws, agent_dir=None, runtime_paths=[], hidden=[], sizes=SIZES, etc_fds={"hosts": 3})
    assert etc_part(args) == [
        "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
        "--symlink", os.readlink("/etc/localtime"), "/etc/localtime",
        "--ro-bind", "/etc/ld.so.conf.d", "/etc/ld.so.conf.d",
        "--perms", "0644", "--ro-bind-data", "3", "/etc/hosts",
    ]


def runtime_part(args: list[str]) -> list[str]:
    start = args.index("/tmp") + 1
    return args[start: args.index("/workspace") - 3]


def bind(path: Path) -> list[str]:
    return ["--ro-bind", str(path), str(path)]


def test_runtime_paths_already_visible_or_not_directories_are_not_bound(ws: Path, host: Path, tmp_path: Path) -> None:
    (tmp_path / "python").write_text("")
    runtime = [Path("/usr"), Path("/usr/lib"), host / "lib" / "python3", tmp_path / "python", tmp_path / "absent"]
    (host / "lib" / "python3").mkdir()
    args = mount_args(ws, agent_dir=None, runtime_paths=runtime, hidden=[], sizes=SIZES, etc_fds={})
    assert runtime_part(args) == []


def test_nested_runtime_paths_are_bound_once_with_their_parents_made_once(ws: Path, host: Path, tmp_path: Path) -> None:
    prefix, base = tmp_path / "opt" / "venv", tmp_path / "opt" / "base"
    (prefix / "bin").mkdir(parents=True)
    base.mkdir()
    args = mount_args(ws, agent_dir=None, runtime_paths=[prefix, prefix / "bin", base], hidden=[], sizes=SIZES,
                      etc_fds={})
    assert runtime_part(args) == [*parents_of(prefix), *bind(prefix), *bind(base)]


def test_a_symlinked_runtime_is_bound_where_it_points_and_linked_where_it_is_named(
    ws: Path, host: Path, tmp_path: Path
) -> None:
    real = tmp_path / "real" / "venv"
    real.mkdir(parents=True)
    (tmp_path / "named").mkdir()
    (tmp_path / "named" / "venv").symlink_to(real)
    named = tmp_path / "named" / "venv"
    args = mount_args(ws, agent_dir=None, runtime_paths=[named], hidden=[], sizes=SIZES, etc_fds={})
    assert runtime_part(args) == [
        *parents_of(real), *bind(real),
        "--perms", "0755", "--dir", str(tmp_path / "named"), "--symlink", str(real), str(named),
    ]


def test_a_symlinked_spelling_inside_a_bound_runtime_needs_no_link(ws: Path, host: Path, tmp_path: Path) -> None:
    real = tmp_path / "venv"
    (real / "lib").mkdir(parents=True)
    (real / "lib64").symlink_to("lib")
    args = mount_args(ws, agent_dir=None, runtime_paths=[real, real / "lib64"], hidden=[], sizes=SIZES,
                      etc_fds={})
    assert runtime_part(args) == [*parents_of(real), *bind(real)]


def test_hidden_paths_are_covered_only_inside_what_is_visible_in_sorted_order(
    ws: Path, host: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    for name in ("b", "a", "c/d"):
        (venv / name).mkdir(parents=True)
    (host / "lib" / "private").mkdir()
    (tmp_path / "alias").symlink_to(venv / "c")
    (tmp_path / "elsewhere").mkdir()
    hidden = [venv / "b", tmp_path / "alias", venv / "a", venv / "b", host / "lib" / "private",
              tmp_path / "elsewhere", venv / "gone"]
    args = mount_args(ws, agent_dir=None, runtime_paths=[venv], hidden=hidden, sizes=SIZES, etc_fds={})
    assert runtime_part(args) == [
        *parents_of(venv), *bind(venv),
        "--tmpfs", f"{host}/lib/private",
        "--tmpfs", str(venv / "a"), "--tmpfs", str(venv / "b"), "--tmpfs", str(venv / "c"),
    ]


def test_etc_files_hold_one_account_and_loopback_only() -> None:
    assert etc_files(65534, 65533) == {
        "passwd": "root:x:0:0::/nonexistent:/usr/sbin/nologin\nagent:x:65534:65533::/workspace/work:/bin/sh\n",
        "group": "root:x:0:\nagent:x:65533:\n",
        "hosts": "127.0.0.1 localhost\n::1 localhost\n",
        "hostname": "sandbox\n",
    }


def test_runtime_paths_are_the_prefixes_and_the_executable_directory_as_named_and_resolved(
    tmp_path: Path, monkeypatch: MonkeyPatch
) -> None:
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "base").mkdir()
    (tmp_path / "base-link").symlink_to("base")
    monkeypatch.setattr(filesystem, "sys", SimpleNamespace(
        prefix=f"{tmp_path}/venv/../venv", base_prefix=str(tmp_path / "base-link"),
        executable=str(tmp_path / "venv" / "bin" / "python")))
    assert python_runtime_paths() == [tmp_path / "venv", tmp_path / "base-link", tmp_path / "base",
                                      tmp_path / "venv" / "bin"]


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm on this host")
def test_dev_is_made_by_bwrap_so_a_runtime_under_it_gets_no_dir_for_it(ws: Path, host: Path) -> None:
    runtime = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        args = mount_args(ws, agent_dir=None, runtime_paths=[runtime], hidden=[], sizes=SIZES, etc_fds={})
    finally:
        runtime.rmdir()
    assert runtime_part(args) == ["--perms", "0755", "--dir", "/dev/shm", *bind(runtime)]
