"""Specification of stages/sandbox as a whole: how a run ends and how its end is reported.

The wall clock stops the program and its children, sandboxed or not; the exit status is the
program's code or 128 plus the signal that killed it, sandboxed or not; a bwrap setup failure is an
infra error, and a program that imitates one is not.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sandbox.run_helpers import make_workspace, needs_bwrap, run_python
from scibench_testing.limits import limits_with
from scibench_testing.processes import running_with_arg


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


SLEEPER = """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "{token}"])
    print("started", flush=True)
    time.sleep(60)
"""


@needs_bwrap
def test_wall_clock_stops_the_program_and_its_children(ws: Path) -> None:
    token = uuid.uuid4().hex
    result = run_python(ws, SLEEPER.format(token=token), limits=limits_with(wall_seconds=1))
    assert (result.exit_code, result.timed_out, result.limits_hit) == (None, True, ("wall",))
    assert (result.stdout, result.infra_error) == ("started\n", None)
    assert result.wall_seconds >= 1.0
    assert running_with_arg(token) == []


def test_unsandboxed_timeout_kills_the_process_group(ws: Path, no_bwrap: None) -> None:
    token = uuid.uuid4().hex
    code = SLEEPER.format(token=token)
    result = run_python(ws, code, limits=limits_with(wall_seconds=1), unsafe_no_sandbox=True)
    assert (result.exit_code, result.timed_out, result.stdout) == (None, True, "started\n")
    assert result.limits_hit == ("wall",)
    assert running_with_arg(token) == []


@needs_bwrap
@pytest.mark.parametrize(("code", "status"), [
    ("import sys; sys.exit(3)", 3),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", 128 + 9),
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", 128 + 11),
    ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 128 + 15),
])
def test_exit_status_is_the_code_or_128_plus_the_signal(ws: Path, code: str, status: int) -> None:
    result = run_python(ws, code)
    assert (result.exit_code, result.timed_out, result.limits_hit) == (status, False, ())


def test_unsandboxed_exit_status_is_the_code_or_128_plus_the_signal(ws: Path, no_bwrap: None) -> None:
    result = run_python(ws, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
                        unsafe_no_sandbox=True)
    assert result.exit_code == 137


@needs_bwrap
def test_bwrap_setup_failure_is_an_infra_error(ws: Path, tmp_path: Path) -> None:
    result = run_python(ws, "print('never')", agent_dir=tmp_path / "missing")
    assert (result.exit_code, result.timed_out, result.stdout) == (1, False, "")
    assert result.infra_error == (
        f"bwrap: Can't find source path {tmp_path / 'missing'}: No such file or directory"
    )


@needs_bwrap
def test_program_imitating_a_bwrap_failure_is_not_an_infra_error(ws: Path) -> None:
    # It also tries to drain the launcher's "started" pipe through every stdin it can reach.
    code = """
        import glob, os, sys
        for path in glob.glob("/proc/[0-9]*/fd/*"):
            try:
                os.read(os.open(path, os.O_RDONLY | os.O_NONBLOCK), 64)
            except OSError:
                pass
        sys.stderr.write("bwrap: Can't mount\\n")
        sys.exit(1)
    """
    result = run_python(ws, code)
    assert (result.exit_code, result.infra_error) == (1, None)
    assert result.stderr == "bwrap: Can't mount\n"
