"""Specification of stages/sandbox/unsandboxed.py: the same limits and reporting, no isolation."""

from __future__ import annotations

import json
import os
import resource
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest
from pytest import MonkeyPatch
from scibench_testing.limits import limits_with
from scibench_testing.processes import running_with_arg

from stages.sandbox import Collected, RunResult
from stages.sandbox import unsandboxed as module
from stages.sandbox.command import environment
from stages.sandbox.filesystem import python_runtime_paths
from stages.sandbox.unsandboxed import run_unsandboxed
from stages.sandbox.untrusted import MISSING

PY = sys.executable


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "data").mkdir(parents=True)
    (root / "work").mkdir()
    (root / "prompt.md").write_text("Report the mean of x.\n")
    return root


def open_fds() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


def capped(kind: int, soft: int, hard: int) -> list[int]:
    ceiling = resource.getrlimit(kind)[1]
    return [soft, hard] if ceiling == resource.RLIM_INFINITY else [min(soft, ceiling), min(hard, ceiling)]


INSPECT = textwrap.dedent("""
    import json, os, resource, sys
    kinds = ("CPU", "AS", "FSIZE", "CORE", "NPROC")
    open("work/answer.json", "w").write("42")
    sys.stderr.write("err")
    print(json.dumps({
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "rlimits": [list(resource.getrlimit(getattr(resource, "RLIMIT_" + k))) for k in kinds],
        "stdin": os.read(0, 10).decode(),
        "own_session": os.getpgid(0) == os.getsid(0) == os.getppid(),  # the launcher leads it
    }))
    sys.exit(5)
""")


def test_a_run_is_in_the_workspace_with_the_whitelisted_environment_and_its_rlimits(
    ws: Path, monkeypatch: MonkeyPatch
) -> None:
    monkeypatch.setenv("SCIBENCH_SECRET", "1")
    before = open_fds()
    limits = limits_with(wall_seconds=60, cpu_seconds=7, address_space_bytes=3 << 30, file_size_bytes=5 << 20,
                    processes=4000)
    begun = time.monotonic()
    result = run_unsandboxed(ws, [PY, "-c", INSPECT], limits, {"SCIBENCH_RUN": "r1"}, ("answer.json", "x"), 10)
    assert 0 < result.wall_seconds <= time.monotonic() - begun
    assert result == RunResult(5, False, result.wall_seconds, result.stdout, "err", None, (),
                               {"answer.json": Collected(b"42", None), "x": MISSING}, "none: --unsafe-no-sandbox")
    inside = json.loads(result.stdout)
    assert (inside["cwd"], inside["stdin"], inside["own_session"]) == (str(ws), "", True)
    assert inside["rlimits"] == [capped(resource.RLIMIT_CPU, 7, 8), capped(resource.RLIMIT_AS, 3 << 30, 3 << 30),
                                 capped(resource.RLIMIT_FSIZE, 5 << 20, 5 << 20), [0, 0],
                                 capped(resource.RLIMIT_NPROC, 4000, 4000)]
    env = inside["env"]
    # The runtime's bin directories, then the system's (the order is test_command.py's to pin).
    assert env.pop("PATH") == environment(python_runtime_paths(), f"{ws}/work", None)["PATH"]
    assert {k: v for k, v in env.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")} == {
        "HOME": f"{ws}/work", "PYTHONDONTWRITEBYTECODE": "1", "MPLCONFIGDIR": f"{ws}/work/.mpl",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "LANG": "C.UTF-8",
        "SCIBENCH_RUN": "r1", "PWD": str(ws)}
    assert open_fds() == before


def test_without_extra_variables_only_the_whitelist(ws: Path) -> None:
    code = "import json, os; print(json.dumps(sorted(os.environ)))"
    result = run_unsandboxed(ws, [PY, "-c", code], limits_with(wall_seconds=60), None, (), 10)
    names = set(json.loads(result.stdout)) - {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"}
    assert names == {"PATH", "HOME", "PYTHONDONTWRITEBYTECODE", "MPLCONFIGDIR", "OMP_NUM_THREADS",
                     "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "LANG", "PWD"}
    assert result.files == {}


def test_a_program_killed_by_a_signal_exits_with_128_plus_it(ws: Path) -> None:
    result = run_unsandboxed(ws, ["/bin/sh", "-c", "kill -SEGV $$"], limits_with(wall_seconds=60), None, (), 10)
    assert (result.exit_code, result.limits_hit, result.infra_error) == (128 + 11, (), None)


def test_a_program_killed_by_sigxfsz_names_the_file_size_limit(ws: Path) -> None:
    result = run_unsandboxed(ws, ["/bin/sh", "-c", "head -c 200000 /dev/zero > work/f"],
                             limits_with(wall_seconds=60, file_size_bytes=100_000), None, (), 10)
    assert (result.exit_code, result.limits_hit) == (128 + 25, ("file_size",))




def within_deadline(call):
    """`call()` in a thread; fails the test instead of hanging it past 30 s."""
    results = []
    thread = threading.Thread(target=lambda: results.append(call()), daemon=True)
    thread.start()
    thread.join(30)
    assert results, "the run did not end within 30 s"
    return results[0]


def test_the_wall_clock_kills_the_run_and_its_children(ws: Path, monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(module.process, "STOP_GRACE_SECONDS", 3600)  # the stop alone must end it
    token = uuid.uuid4().hex
    script = f"echo started; {PY} -c 'import time; time.sleep(60)' {token} & exec sleep 60"
    result = within_deadline(lambda: run_unsandboxed(ws, ["/bin/sh", "-c", script], limits_with(wall_seconds=0.5),
                                                     None, (), 10))
    assert (result.exit_code, result.timed_out, result.limits_hit, result.stdout) == (None, True, ("wall",),
                                                                                       "started\n")
    assert result.wall_seconds >= 0.5
    assert running_with_arg(token) == []


def test_output_past_the_cap_kills_the_run(ws: Path) -> None:
    script = "head -c 300000 /dev/zero | tr '\\0' a; exec sleep 60"
    result = within_deadline(lambda: run_unsandboxed(ws, ["/bin/sh", "-c", script],
                                                     limits_with(wall_seconds=60, output_bytes=100_000), None, (), 10))
    assert (result.exit_code, result.timed_out, result.limits_hit) == (None, False, ("output",))
    assert result.stdout == "a" * 20_000


def test_a_command_that_cannot_start_is_an_infra_error(ws: Path, monkeypatch: MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", "prlimit")

    monkeypatch.setattr(module.subprocess, "Popen", refuse)
    before = open_fds()
    begun = time.monotonic()
    result = run_unsandboxed(ws, ["true"], limits_with(wall_seconds=60), None, ("answer.json",), 10)
    assert result == RunResult(None, False, result.wall_seconds, "", "",
                               "cannot start: [Errno 13] Permission denied: 'prlimit'")
    assert 0 <= result.wall_seconds <= time.monotonic() - begun
    assert open_fds() == before


def test_a_launcher_that_fails_before_the_program_is_an_infra_error(ws: Path, monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(module.command, "UNSANDBOXED_LAUNCHER", ("/bin/sh", "-c", "echo cannot >&2; exit 7", "sh"))
    result = run_unsandboxed(ws, ["true"], limits_with(wall_seconds=60), None, (), 10)
    assert (result.exit_code, result.infra_error) == (7, "cannot")


ESCAPE = textwrap.dedent("""
    import os, time
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        os.write(ready_w, b"1")
        time.sleep(60)
        os._exit(0)
    os.read(ready_r, 1)
    print(child, flush=True)
""")


def test_a_writer_that_left_the_process_group_is_outwaited_at_the_wall_clock(
    ws: Path, monkeypatch: MonkeyPatch
) -> None:
    # The program exits; a process it left in a session of its own keeps the output open. The stop
    # cannot reach it; after the grace the run is forced and ends.
    monkeypatch.setattr(module.process, "STOP_GRACE_SECONDS", 0.2)
    result = within_deadline(lambda: run_unsandboxed(ws, [PY, "-c", ESCAPE], limits_with(wall_seconds=0.5), None, (),
                                                     10))
    os.kill(int(result.stdout), 9)
    assert (result.exit_code, result.timed_out, result.limits_hit, result.infra_error) == (
        None, True, ("wall",), None)
