"""Specification of stages/sandbox/result.py: how a watched run becomes its RunResult, and harvest_work.

`result_of` (from what the harness saw to a RunResult: exit code, stop, infra error, limits named,
output) and `harvest_work` (the named files of work/, each read as untrusted input).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox.init_helpers import open_fds

from stages.sandbox.process import Tail, Watch
from stages.sandbox.result import RunResult, harvest_work, result_of
from stages.sandbox.untrusted import MISSING, Collected

# --- result_of: from what the harness saw to a RunResult ---


def seen(started: bool = True, done: int | None = None, stop: str | None = None, out: bytes = b"",
         err: bytes = b"") -> Watch:
    state = Watch(started=started, done_status=done, stop_reason=stop, stdout=Tail(), stderr=Tail())
    state.stdout.add(out)
    state.stderr.add(err)
    return state


def test_a_reported_status_is_the_exit_code() -> None:
    result = result_of(seen(done=3, out=b"out", err=b"err"), -9, 1.5, {"a": MISSING}, [], "how")
    assert result == RunResult(3, False, 1.5, "out", "err", None, (), {"a": MISSING}, "how")


def test_without_a_report_the_process_status_is_the_exit_code() -> None:
    assert result_of(seen(), 4, 0.1, {}, [], "").exit_code == 4
    assert result_of(seen(), 0, 0.1, {}, [], "").exit_code == 0
    assert result_of(seen(), -11, 0.1, {}, [], "").exit_code == 128 + 11


def test_a_stopped_run_has_no_exit_code_and_names_the_stop() -> None:
    assert result_of(seen(done=143, stop="wall"), -9, 2.0, {}, [], "") == RunResult(
        None, True, 2.0, "", "", None, ("wall",), {}, "")
    assert result_of(seen(stop="output"), -9, 2.0, {}, ["memory"], "") == RunResult(
        None, False, 2.0, "", "", None, ("output", "memory"), {}, "")


def test_a_run_that_never_started_is_an_infra_error_in_its_own_words() -> None:
    assert result_of(seen(started=False, err=b"  bwrap: no\n"), 1, 0.1, {}, [], "").infra_error == "bwrap: no"
    assert result_of(seen(started=False, err=b" \n"), 1, 0.1, {}, [], "").infra_error == (
        "sandbox setup exited with 1")
    assert result_of(seen(started=False), -9, 0.1, {}, [], "").infra_error == "sandbox setup exited with -9"
    assert result_of(seen(started=True, err=b"bwrap: faked"), 1, 0.1, {}, [], "").infra_error is None


@pytest.mark.parametrize(("status", "limit"), [(128 + 24, "cpu"), (128 + 25, "file_size")])
def test_death_by_an_rlimit_signal_names_the_limit(status: int, limit: str) -> None:
    assert result_of(seen(done=status), 0, 0.1, {}, [], "").limits_hit == (limit,)
    assert result_of(seen(), 128 - status, 0.1, {}, [], "").limits_hit == (limit,)  # killed, no report
    assert result_of(seen(done=status), 0, 0.1, {}, ["cpu", "disk:tmp"], "").limits_hit == tuple(
        dict.fromkeys(["cpu", "disk:tmp", limit]))


def test_other_signals_name_no_limit() -> None:
    assert result_of(seen(done=128 + 9), 0, 0.1, {}, [], "").limits_hit == ()
    assert result_of(seen(done=24), 0, 0.1, {}, [], "").limits_hit == ()


def test_limits_are_named_once_in_order() -> None:
    result = result_of(seen(stop="cpu"), -9, 1.0, {}, ["memory", "cpu", "pids", "memory"], "")
    assert result.limits_hit == ("cpu", "memory", "pids")


def test_the_output_is_the_decoded_tail() -> None:
    result = result_of(seen(done=0, out=b"a" * 30_000 + b"\xff", err="é".encode()), 0, 0.1, {}, [], "")
    assert (result.stdout, result.stderr) == ("a" * 19_999 + "\ufffd", "é")


# --- harvest_work ---


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
