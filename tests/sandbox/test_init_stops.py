"""Specification of stages/sandbox/__init__.py: how a bwrap run is stopped and its limits named.

The wall clock (the answer is still collected), the output cap and, as root with a per-run cgroup,
the process, memory and CPU totals each stop a run and are named, as are full tmpfs mounts. bwrap
leads a process group of its own; a sandbox stuck in setup is still killed at the wall clock; a stop
signals the launchers, not the init above them, and forces the end when there is no launcher yet.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
from pytest import MonkeyPatch
from sandbox.init_helpers import FORK_UNTIL_REFUSED, PY, empty_workspace, in_thread, needs_bwrap, needs_cgroup
from scibench_testing.limits import limits_with
from scibench_testing.processes import running_with_arg

from stages import sandbox
from stages.sandbox import Collected, RunResult, run_sandboxed
from stages.sandbox.process import Watch


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return empty_workspace(tmp_path / "ws")


@needs_bwrap
def test_the_wall_clock_stops_the_run_and_still_collects_its_answer(ws: Path) -> None:
    token = uuid.uuid4().hex
    script = f"echo started; printf 1 > work/answer.json; sleep 60 & exec {PY} -c 'import time; time.sleep(60)' {token}"
    result = run_sandboxed(ws, ["/bin/sh", "-c", script], limits=limits_with(wall_seconds=0.5))
    assert (result.exit_code, result.timed_out, result.limits_hit, result.stdout) == (None, True, ("wall",),
                                                                                       "started\n")
    assert result.files == {"answer.json": Collected(b"1", None)}
    assert result.wall_seconds >= 0.5
    assert running_with_arg(token) == []


@needs_bwrap
def test_output_past_the_cap_stops_the_run(ws: Path) -> None:
    result = run_sandboxed(ws, ["/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a; sleep 60"],
                           limits=limits_with(wall_seconds=60, output_bytes=100_000))
    assert (result.exit_code, result.timed_out, result.limits_hit) == (None, False, ("output",))
    assert result.stdout == "a" * 20_000


@needs_bwrap
def test_full_tmpfs_mounts_are_named(ws: Path) -> None:
    script = ("head -c 1000000 /dev/zero > work/f; head -c 1000000 /dev/zero > /tmp/f; "
              "head -c 1000000 /dev/zero > /dev/shm/f; exit 0")
    limits = limits_with(wall_seconds=60, work_bytes=256 << 10, tmp_bytes=512 << 10, shm_bytes=256 << 10)
    assert run_sandboxed(ws, ["/bin/sh", "-c", script], limits=limits).limits_hit == (
        "disk:work", "disk:tmp", "disk:shm")
    only_tmp = "head -c 1000000 /dev/zero > /tmp/f; exit 0"
    assert run_sandboxed(ws, ["/bin/sh", "-c", only_tmp], limits=limits).limits_hit == ("disk:tmp",)


@needs_bwrap
@needs_cgroup
def test_the_process_total_refuses_forks(ws: Path) -> None:
    result = run_sandboxed(ws, [PY, "-c", FORK_UNTIL_REFUSED], limits=limits_with(wall_seconds=60, processes=8))
    # 8 in all: bwrap, its init, the launcher and this program are four of them.
    assert (result.exit_code, result.stdout, result.limits_hit) == (
        0, "4 Resource temporarily unavailable\n", ("pids",))


@needs_bwrap
@needs_cgroup
def test_the_memory_total_kills(ws: Path) -> None:
    code = "block = bytearray(200 << 20)\nfor i in range(0, len(block), 4096): block[i] = 1"
    result = run_sandboxed(ws, [PY, "-c", code], limits=limits_with(wall_seconds=60, memory_bytes=100 << 20))
    assert (result.exit_code, result.limits_hit) == (128 + signal.SIGKILL, ("memory",))


@needs_bwrap
@needs_cgroup
def test_the_cpu_total_stops_the_run(ws: Path) -> None:
    result = run_sandboxed(ws, [PY, "-c", "while True: pass"],
                           limits=limits_with(wall_seconds=60, cpu_seconds=1, cpu_cores=1.0))
    assert (result.exit_code, result.timed_out, result.limits_hit) == (None, False, ("cpu",))


@needs_bwrap
def test_bwrap_leads_a_process_group_of_its_own(ws: Path) -> None:
    # So killing the group reaches bwrap and whatever it left, and a terminal's signals do not.
    script = "while [ ! -e data/go ]; do sleep 0.05; done"
    results: list[RunResult] = []
    thread = threading.Thread(target=lambda: results.append(
        run_sandboxed(ws, ["/bin/sh", "-c", script], limits=limits_with(wall_seconds=60))), daemon=True)
    thread.start()
    try:
        pid = None
        for _ in range(3000):
            pid = next((int(c.parent.name) for c in Path("/proc").glob("[0-9]*/cmdline")
                        if _argv(c)[:1] == [b"bwrap"] and str(ws / "prompt.md").encode() in _argv(c)), None)
            if pid is not None:
                break
            time.sleep(0.01)
        assert pid is not None, "bwrap did not start"
        assert (os.getpgid(pid), os.getsid(pid)) == (pid, pid)
    finally:
        (ws / "data" / "go").write_text("")
        thread.join(60)
    assert results[0].exit_code == 0


def _argv(cmdline: Path) -> list[bytes]:
    try:
        return cmdline.read_bytes().split(b"\0")
    except OSError:
        return []


@needs_bwrap
def test_a_sandbox_stuck_in_setup_is_killed_at_the_wall_clock(ws: Path, monkeypatch: MonkeyPatch) -> None:
    # bwrap reads the seccomp program to its end before it starts anything: a pipe never closed
    # holds it in setup, before it has told the harness the sandbox's pid.
    writers = []
    real = sandbox._memfd

    def stuck(name: str, data: bytes) -> int:
        if name != "seccomp":
            return real(name, data)
        read, write = os.pipe()
        writers.append(write)
        return read

    monkeypatch.setattr(sandbox, "_memfd", stuck)
    monkeypatch.setattr(sandbox.process, "STOP_GRACE_SECONDS", 3600)  # the stop alone must end it
    thread, results = in_thread(lambda: run_sandboxed(ws, ["true"], limits=limits_with(wall_seconds=0.5)))
    ended_while_stuck = not thread.is_alive()
    for write in writers:  # lets a sandbox the stop did not end go on, and the test with it
        os.close(write)
    thread.join(60)
    assert ended_while_stuck, "the stop did not end a sandbox stuck in setup"
    result = results[0]
    assert (result.exit_code, result.timed_out, result.limits_hit, result.files) == (None, True, ("wall",), {})
    assert result.infra_error.startswith("sandbox setup exited with ")


def test_a_stop_signals_the_launchers_not_the_init_above_them() -> None:
    init = subprocess.Popen(["/bin/sh", "-c", "sleep 60 & echo $!; sleep 60 & echo $!; wait"],
                            stdout=subprocess.PIPE, start_new_session=True)
    forced = []
    try:
        assert init.stdout is not None
        launchers = sorted(int(init.stdout.readline()) for _ in range(2))
        assert sandbox.process.children_of(init.pid) == launchers
        sandbox.stop_launcher(Watch(sandbox_pid=init.pid), forced.append)
        # The init is not signalled: it ends by itself, status 0, once the SIGTERMed children are gone.
        assert init.wait(timeout=30) == 0
        assert forced == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(init.pid, signal.SIGKILL)
        init.wait(timeout=30)


def test_a_stop_before_the_sandbox_has_a_launcher_forces_the_end() -> None:
    forced = []
    no_pid = Watch()
    sandbox.stop_launcher(no_pid, forced.append)
    lonely = subprocess.Popen(["sleep", "60"])
    try:
        childless = Watch(sandbox_pid=lonely.pid)
        sandbox.stop_launcher(childless, forced.append)
    finally:
        lonely.kill()
    assert lonely.wait(timeout=30) == -signal.SIGKILL  # the SIGKILL here, not a SIGTERM before it
    assert forced == [no_pid, childless]
