"""Specification of stages/sandbox/process.py `watch` over plain local processes.

The processes here stand in for bwrap and its launcher: they write `x` and `done <status>` on the
report pipe (their stdin) as the launcher does, so each stop and report path runs without a sandbox:
a reported end harvested then forced, the wall clock, the output cap and the CPU total (and which is
named first), a run that ignores the stop, output still in the pipes, and a writer left behind in a
session of its own that must not hold the harness.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable

import pytest
from pytest import MonkeyPatch
from sandbox.process_runs import DEADLINE, Run, start

from stages.sandbox import process
from stages.sandbox.process import Watch, kill_group, signal_quietly, watch


def watched(run: Run, *, info_fd: int | None = None, wall_seconds: float = 60.0, output_bytes: int = 1 << 20,
            over_cpu: Callable[[], bool] = lambda: False, on_stop: str = "kill") -> Watch:
    """`watch` in a thread with a deadline; every callback is recorded in `run.events`.

    `on_stop` is what `stop` does: "kill" the group, "term" (SIGTERM to the process) or "nothing".
    """

    def on_done(state: Watch) -> None:
        run.events.append(("on_done", state.done_status))

    def stop(state: Watch) -> None:
        run.events.append(("stop", state.stop_reason))
        if on_stop == "kill":
            kill_group(run.proc)
        elif on_stop == "term":
            signal_quietly(run.proc.pid, signal.SIGTERM)

    def force(state: Watch) -> None:
        run.events.append(("force", state.stop_reason))
        kill_group(run.proc)

    result: list[Watch] = []
    thread = threading.Thread(target=lambda: result.append(watch(
        run.proc, run.report_r, info_fd, wall_seconds=wall_seconds, output_bytes=output_bytes,
        over_cpu=over_cpu, on_done=on_done, stop=stop, force=force)), daemon=True)
    thread.start()
    thread.join(DEADLINE)
    if thread.is_alive():
        kill_group(run.proc)
        thread.join(DEADLINE)
        pytest.fail(f"watch did not return within {DEADLINE} s; events so far: {run.events}")
    os.close(run.report_r)
    return result[0]


def readable(fd: int) -> None:
    """Wait until `fd` has data, without taking it."""
    assert select.select([fd], [], [], DEADLINE)[0] == [fd]


LAUNCHER_LIKE = "printf x >&0; echo out; echo err >&2; printf 'done %s\\n' \"$1\" >&0; exec sleep 60"


def test_a_reported_end_is_harvested_then_forced() -> None:
    run = start(LAUNCHER_LIKE, "3")
    state = watched(run)
    assert run.events == [("on_done", 3), ("force", None)]
    assert (state.started, state.done_status, state.stop_reason) == (True, 3, None)
    assert (state.stdout.text(), state.stderr.text()) == ("out\n", "err\n")
    assert run.proc.returncode == -signal.SIGKILL


def test_a_process_that_never_reports_ends_on_its_own() -> None:
    run = start("echo 'bwrap: cannot do it' >&2; exit 1")
    state = watched(run)
    assert run.events == []
    assert (state.started, state.done_status, state.stop_reason) == (False, None, None)
    assert state.stderr.text() == "bwrap: cannot do it\n"
    assert run.proc.returncode == 1


def test_the_wall_clock_stops_a_silent_run_once() -> None:
    run = start("printf x >&0; echo started; exec sleep 60")
    begun = time.monotonic()
    state = watched(run, wall_seconds=0.3)
    assert time.monotonic() - begun >= 0.3
    assert run.events == [("stop", "wall")]
    assert (state.started, state.done_status, state.stop_reason) == (True, None, "wall")
    assert state.stdout.text() == "started\n"


def test_output_past_the_cap_stops_the_run() -> None:
    run = start("printf x >&0; head -c 3000 /dev/zero | tr '\\0' a; exec sleep 60")
    state = watched(run, output_bytes=1000)
    assert run.events == [("stop", "output")]
    assert state.stop_reason == "output"
    assert state.stdout.total > 1000


def test_the_output_cap_counts_stdout_and_stderr_together() -> None:
    run = start("printf x >&0; head -c 600 /dev/zero; head -c 600 /dev/zero >&2; exec sleep 60")
    state = watched(run, output_bytes=1000)
    assert run.events == [("stop", "output")]
    assert (state.stdout.total, state.stderr.total) == (600, 600)


def test_output_of_exactly_the_cap_is_allowed() -> None:
    run = start("head -c 500 /dev/zero; head -c 500 /dev/zero >&2; printf 'xdone 0\\n' >&0; exec sleep 60")
    state = watched(run, output_bytes=1000)
    assert run.events == [("on_done", 0), ("force", None)]
    assert (state.stdout.total + state.stderr.total, state.stop_reason) == (1000, None)


def test_the_cpu_total_stops_the_run() -> None:
    run = start("printf x >&0; exec sleep 60")
    state = watched(run, over_cpu=lambda: True)
    assert run.events == [("stop", "cpu")]
    assert state.stop_reason == "cpu"


def test_the_wall_clock_is_named_before_output_and_cpu() -> None:
    run = start("printf x >&0; head -c 2000 /dev/zero; exec sleep 60")
    readable(run.proc.stdout.fileno())  # type: ignore[union-attr]
    state = watched(run, wall_seconds=0, output_bytes=10, over_cpu=lambda: True)
    assert (run.events, state.stop_reason) == ([("stop", "wall")], "wall")


def test_output_is_named_before_cpu() -> None:
    run = start("head -c 2000 /dev/zero; exec sleep 60")
    readable(run.proc.stdout.fileno())  # type: ignore[union-attr]
    state = watched(run, output_bytes=10, over_cpu=lambda: True)
    assert (run.events, state.stop_reason) == ([("stop", "output")], "output")


def test_a_run_that_ignores_the_stop_is_forced_after_the_grace(monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(process, "STOP_GRACE_SECONDS", 0.5)
    run = start("printf x >&0; exec sleep 60")
    begun = time.monotonic()
    state = watched(run, wall_seconds=0.1, on_stop="nothing")
    assert time.monotonic() - begun >= 0.6
    assert run.events == [("stop", "wall"), ("force", "wall")]
    assert state.stop_reason == "wall"
    assert run.proc.returncode == -signal.SIGKILL


def test_a_run_that_reports_after_a_stop_is_harvested_then_forced() -> None:
    # As the launcher answers SIGTERM: report `done`, then wait to be harvested and killed.
    run = start("trap 'printf \"done 143\\n\" >&0' TERM; printf x >&0; sleep 60 & wait; exec sleep 60")
    state = watched(run, wall_seconds=0.2, on_stop="term")
    assert run.events == [("stop", "wall"), ("on_done", 143), ("force", "wall")]
    assert (state.stop_reason, state.done_status) == ("wall", 143)


def test_the_bwrap_info_gives_the_sandbox_pid() -> None:
    info_r, info_w = os.pipe()
    os.write(info_w, b'{\n    "child-pid": 4242\n}\n')
    os.close(info_w)
    run = start(LAUNCHER_LIKE, "0")
    state = watched(run, info_fd=info_r)
    os.close(info_r)
    assert (state.sandbox_pid, state.done_status) == (4242, 0)


def test_output_still_in_the_pipes_when_the_run_ends_is_taken() -> None:
    # A program that wrote more than one read takes, reported and exited before the harness looked:
    # the first round reads one chunk and the report, the rest is drained after the force.
    code = ("import fcntl, os; fcntl.fcntl(1, fcntl.F_SETPIPE_SZ, 1 << 20); "
            "os.write(1, b'a' * 100_000); os.write(0, b'xdone 0\\n')")
    report_r, report_w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=report_w, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    os.close(report_w)
    assert proc.wait(timeout=DEADLINE) == 0
    run = Run(proc, report_r)
    state = watched(run)
    assert run.events == [("on_done", 0), ("force", None)]
    assert (state.stdout.total, state.stdout.text()) == (100_000, "a" * 20_000)


def test_the_harness_ends_of_the_output_pipes_are_made_non_blocking() -> None:
    run = start(LAUNCHER_LIKE, "0")
    assert watched(run).done_status == 0
    assert [os.get_blocking(f.fileno()) for f in (run.proc.stdout, run.proc.stderr)] == [False, False]  # type: ignore[union-attr]


# A program that leaves a process in a session of its own, holding the output pipes, then reports
# (or, with no report, exits): the harness must not wait on that writer for ever.
ESCAPE = textwrap.dedent("""
    import os, sys, time
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        os.write(ready_w, b"1")
        time.sleep(60)
        os._exit(0)
    os.read(ready_r, 1)
    print(child, flush=True)
    if sys.argv[1] == "report":
        os.write(0, b"xdone 0\\n")
        time.sleep(60)
""")


def start_escaping(mode: str) -> Run:
    report_r, report_w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", ESCAPE, mode], stdin=report_w, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    os.close(report_w)
    return Run(proc, report_r)


def kill_escaped(state: Watch) -> None:
    """SIGKILL the process that left the run's session (the program printed its pid)."""
    signal_quietly(int(state.stdout.text()), signal.SIGKILL)


def test_a_writer_left_behind_after_the_report_does_not_hold_the_harness() -> None:
    run = start_escaping("report")
    state = watched(run)
    kill_escaped(state)
    assert run.events == [("on_done", 0), ("force", None)]
    assert (state.done_status, state.stop_reason) == (0, None)


def test_a_writer_left_behind_by_a_program_that_exits_keeps_the_run_to_its_wall_clock(monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(process, "STOP_GRACE_SECONDS", 0.2)
    run = start_escaping("exit")
    state = watched(run, wall_seconds=0.5)
    kill_escaped(state)
    assert run.events == [("stop", "wall"), ("force", "wall")]
    assert (state.started, state.done_status, state.stop_reason) == (False, None, "wall")
    assert run.proc.returncode == 0
