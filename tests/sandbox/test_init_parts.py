"""Specification of stages/sandbox/__init__.py, its pure parts, tested directly.

`_result` (from what the harness saw to a RunResult: exit code, stop, infra error, limits named,
output), `harvest_work`, `_full_tmpfs`, `_memfd` and `_close`; then which path `run_sandboxed` takes
(bwrap, an allowed unsandboxed run, or a refusal), with the runs themselves stubbed. The runs in bwrap
are in test_init_bwrap.py and test_init_stops.py; the slower contract tests are in test_run_*.py.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest import MonkeyPatch
from sandbox.init_helpers import empty_workspace, open_fds

from stages import sandbox
from stages.sandbox import (
    Collected,
    Limits,
    RunResult,
    SandboxUnavailable,
    _close,
    _full_tmpfs,
    _memfd,
    _result,
    harvest_work,
    run_sandboxed,
)
from stages.sandbox.process import Tail, Watch
from stages.sandbox.untrusted import MISSING

# --- _result: from what the harness saw to a RunResult ---


def seen(started: bool = True, done: int | None = None, stop: str | None = None, out: bytes = b"",
         err: bytes = b"") -> Watch:
    state = Watch(started=started, done_status=done, stop_reason=stop, stdout=Tail(), stderr=Tail())
    state.stdout.add(out)
    state.stderr.add(err)
    return state


def test_a_reported_status_is_the_exit_code() -> None:
    result = _result(seen(done=3, out=b"out", err=b"err"), -9, 1.5, {"a": MISSING}, [], "how")
    assert result == RunResult(3, False, 1.5, "out", "err", None, (), {"a": MISSING}, "how")


def test_without_a_report_the_process_status_is_the_exit_code() -> None:
    assert _result(seen(), 4, 0.1, {}, [], "").exit_code == 4
    assert _result(seen(), 0, 0.1, {}, [], "").exit_code == 0
    assert _result(seen(), -11, 0.1, {}, [], "").exit_code == 128 + 11


def test_a_stopped_run_has_no_exit_code_and_names_the_stop() -> None:
    assert _result(seen(done=143, stop="wall"), -9, 2.0, {}, [], "") == RunResult(
        None, True, 2.0, "", "", None, ("wall",), {}, "")
    assert _result(seen(stop="output"), -9, 2.0, {}, ["memory"], "") == RunResult(
        None, False, 2.0, "", "", None, ("output", "memory"), {}, "")


def test_a_run_that_never_started_is_an_infra_error_in_its_own_words() -> None:
    assert _result(seen(started=False, err=b"  bwrap: no\n"), 1, 0.1, {}, [], "").infra_error == "bwrap: no"
    assert _result(seen(started=False, err=b" \n"), 1, 0.1, {}, [], "").infra_error == (
        "sandbox setup exited with 1")
    assert _result(seen(started=False), -9, 0.1, {}, [], "").infra_error == "sandbox setup exited with -9"
    assert _result(seen(started=True, err=b"bwrap: faked"), 1, 0.1, {}, [], "").infra_error is None


@pytest.mark.parametrize(("status", "limit"), [(128 + 24, "cpu"), (128 + 25, "file_size")])
def test_death_by_an_rlimit_signal_names_the_limit(status: int, limit: str) -> None:
    assert _result(seen(done=status), 0, 0.1, {}, [], "").limits_hit == (limit,)
    assert _result(seen(), 128 - status, 0.1, {}, [], "").limits_hit == (limit,)  # killed, no report
    assert _result(seen(done=status), 0, 0.1, {}, ["cpu", "disk:tmp"], "").limits_hit == tuple(
        dict.fromkeys(["cpu", "disk:tmp", limit]))


def test_other_signals_name_no_limit() -> None:
    assert _result(seen(done=128 + 9), 0, 0.1, {}, [], "").limits_hit == ()
    assert _result(seen(done=24), 0, 0.1, {}, [], "").limits_hit == ()


def test_limits_are_named_once_in_order() -> None:
    result = _result(seen(stop="cpu"), -9, 1.0, {}, ["memory", "cpu", "pids", "memory"], "")
    assert result.limits_hit == ("cpu", "memory", "pids")


def test_the_output_is_the_decoded_tail() -> None:
    result = _result(seen(done=0, out=b"a" * 30_000 + b"\xff", err="é".encode()), 0, 0.1, {}, [], "")
    assert (result.stdout, result.stderr) == ("a" * 19_999 + "\ufffd", "é")


# --- harvest_work, _full_tmpfs, _memfd, _close ---


def test_harvest_collects_each_name_from_work(tmp_path: Path) -> None:
    (tmp_path / "answer.json").write_bytes(b"{}")
    (tmp_path / "big").write_bytes(b"12345")
    before = open_fds()
    assert harvest_work(str(tmp_path), ["answer.json", "big", "absent"], 4) == {
        "answer.json": Collected(b"{}", None), "big": Collected(None, "big is larger than 4 bytes"),
        "absent": MISSING}
    assert open_fds() == before


def test_harvest_of_an_unreadable_work_names_the_problem_for_each_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert harvest_work(str(tmp_path / "gone"), ["a", "b"], 10) == {
        "a": Collected(None, "work/ unreadable: No such file or directory"),
        "b": Collected(None, "work/ unreadable: No such file or directory")}
    assert harvest_work(str(tmp_path / "file"), ["a"], 10) == {
        "a": Collected(None, "work/ unreadable: Not a directory")}


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
        run_sandboxed(ws, ["true"], limits=Limits())
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
    limits = Limits(wall_seconds=5)
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
    limits = Limits(wall_seconds=5)
    assert run_sandboxed(tmp_path / "link", ["prog"], limits=limits, agent_dir=tmp_path, hidden=(tmp_path,),
                         extra_env={"A": "1"}, collect_files=("x",), collect_bytes=5,
                         unsafe_no_sandbox=True) == "result"
    assert run_sandboxed(ws, ["prog"], limits=limits) == "result"
    assert calls == [(ws, ["prog"], limits, tmp_path, [tmp_path], {"A": "1"}, ("x",), 5, {}),
                     (ws, ["prog"], limits, None, [], None, ("answer.json",), 1 << 20, {})]
