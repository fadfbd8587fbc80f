"""Specification of stages/sandbox/__init__.py, its pure parts, tested directly.

`_full_tmpfs`, `_memfd` and `_close`; then which path `run_sandboxed` takes (bwrap, an allowed
unsandboxed run, or a refusal), with the runs themselves stubbed. The runs in bwrap are in
test_init_bwrap.py and test_init_stops.py; the slower contract tests are in test_run_*.py; how a
run becomes a RunResult (result.py) is in test_result.py.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest import MonkeyPatch
from sandbox.init_helpers import empty_workspace
from scibench_testing.limits import limits_with

from stages import sandbox
from stages.sandbox import (
    SandboxUnavailable,
    _close,
    _full_tmpfs,
    _memfd,
    run_sandboxed,
)

# --- _full_tmpfs, _memfd, _close ---


def test_full_tmpfs_are_those_with_less_than_64_kib_free(monkeypatch: MonkeyPatch) -> None:
    free = {"/r/workspace/work": (15, 4096), "/r/tmp": (16, 4096), "/r/dev/shm": (0, 1024)}
    asked = []

    def statvfs(path: str) -> SimpleNamespace:
        asked.append(path)
        return SimpleNamespace(f_bavail=free[path][0], f_frsize=free[path][1])

    monkeypatch.setattr(sandbox.os, "statvfs", statvfs)
    assert _full_tmpfs("/r") == ["disk:work", "disk:shm"]
    assert asked == ["/r/workspace/work", "/r/tmp", "/r/dev/shm"]
    free.update({"/r/workspace/work": (16, 4096), "/r/dev/shm": (63, 1024), "/r/tmp": (1, 65535)})
    assert _full_tmpfs("/r") == ["disk:tmp", "disk:shm"]


def test_full_tmpfs_skips_what_cannot_be_looked_at(tmp_path: Path) -> None:
    (tmp_path / "tmp").mkdir()
    assert _full_tmpfs(str(tmp_path)) == []
    assert _full_tmpfs(str(tmp_path / "gone")) == []


def test_memfd_holds_the_data_from_its_start_under_a_scibench_name() -> None:
    fd = _memfd("seccomp", b"\x01\x02data")
    try:
        assert os.read(fd, 100) == b"\x01\x02data"
        assert os.readlink(f"/proc/self/fd/{fd}") == "/memfd:scibench-seccomp (deleted)"
    finally:
        os.close(fd)


def test_close_closes_each_and_ignores_those_already_closed() -> None:
    a, b = os.pipe()
    os.close(a)
    _close(a, b, b)
    with pytest.raises(OSError):
        os.fstat(b)


# --- run_sandboxed: which path a run takes ---


def test_bwrap_is_looked_up_on_path(monkeypatch: MonkeyPatch) -> None:
    asked = []
    monkeypatch.setattr(sandbox, "shutil", SimpleNamespace(which=lambda name: asked.append(name) or None))
    assert not sandbox.bwrap_available()
    monkeypatch.setattr(sandbox, "shutil", SimpleNamespace(which=lambda name: asked.append(name) or "/x/bwrap"))
    assert sandbox.bwrap_available()
    assert asked == ["bwrap", "bwrap"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return empty_workspace(tmp_path / "ws")


def test_without_bwrap_a_run_is_refused_unless_allowed(ws: Path, monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_available", lambda: False)
    with pytest.raises(SandboxUnavailable) as raised:
        run_sandboxed(ws, ["true"], limits=limits_with())
    assert str(raised.value) == (
        "bubblewrap (bwrap) is not installed: install it with `apt-get install -y bubblewrap`, "
        "or allow an unsandboxed run explicitly (--unsafe-no-sandbox)")


def test_an_allowed_unsandboxed_run_is_logged_and_passed_on(
    ws: Path, tmp_path: Path, monkeypatch: MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import stages.sandbox.unsandboxed as unsandboxed

    calls = []
    monkeypatch.setattr(sandbox, "bwrap_available", lambda: False)
    monkeypatch.setattr(unsandboxed, "run_unsandboxed", lambda *args: calls.append(args) or "result")
    (tmp_path / "link").symlink_to(ws)
    limits = limits_with(wall_seconds=5)
    with caplog.at_level(logging.WARNING, logger="stages.sandbox"):
        assert run_sandboxed(tmp_path / "link", ["prog", "arg"], limits=limits, extra_env={"A": "1"},
                             collect_files=("x",), collect_bytes=5, unsafe_no_sandbox=True) == "result"
        assert run_sandboxed(ws, ["prog"], limits=limits, unsafe_no_sandbox=True) == "result"
    assert calls == [(ws, ["prog", "arg"], limits, {"A": "1"}, ("x",), 5, {}),
                     (ws, ["prog"], limits, None, ("answer.json",), 1 << 20, {})]
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("stages.sandbox", "WARNING", f"bwrap unavailable: running ['prog', 'arg'] UNSANDBOXED in {ws}"),
        ("stages.sandbox", "WARNING", f"bwrap unavailable: running ['prog'] UNSANDBOXED in {ws}")]


def test_with_bwrap_the_run_goes_into_the_sandbox(ws: Path, tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(sandbox, "bwrap_available", lambda: True)
    monkeypatch.setattr(sandbox, "_run_in_bwrap", lambda *args: calls.append(args) or "result")
    (tmp_path / "link").symlink_to(ws)
    limits = limits_with(wall_seconds=5)
    assert run_sandboxed(tmp_path / "link", ["prog"], limits=limits, agent_dir=tmp_path, hidden=(tmp_path,),
                         extra_env={"A": "1"}, collect_files=("x",), collect_bytes=5,
                         unsafe_no_sandbox=True) == "result"
    assert run_sandboxed(ws, ["prog"], limits=limits) == "result"
    assert calls == [(ws, ["prog"], limits, tmp_path, [tmp_path], {"A": "1"}, ("x",), 5, {}),
                     (ws, ["prog"], limits, None, [], None, ("answer.json",), 1 << 20, {})]
