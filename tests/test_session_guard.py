"""A test session stopped with SIGTERM takes its processes, sandboxes and folders with it.

An inner pytest session (two xdist workers, as `make test` runs) with the session guard plugin runs
a test that blocks on a harness two processes down (`sh` -> the busy harness, as `dvc repro` ->
`python -m flows.evaluate`) and a test that waits on a process in a session of its own. Once both
are running, the controller alone gets SIGTERM (what `make` passes on to it). Nothing may remain:
no process of the session, no workspace or cgroup of the harness.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scibench_testing.processes import descendants, survivors
from scibench_testing.project import ROOT

from stages.sandbox import debris

INNER = '''
import subprocess, sys

def test_a_build_two_processes_down():
    subprocess.run(["sh", "-c", f"{sys.executable} -m scibench_testing.busy_harness 2 120 {PUBLIC!r}"], check=True)

def test_a_process_in_a_session_of_its_own():
    subprocess.Popen(["sleep", "120"], start_new_session=True).wait()
'''


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_sigterm_to_the_controller_leaves_nothing_behind(tmp_path: Path) -> None:
    public = tmp_path / "public"
    public.mkdir()
    (public / "table.csv").write_text("x\n1\n")
    (tmp_path / "test_inner.py").write_text(INNER.replace("PUBLIC", repr(str(public))))
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "scibench_testing.session_guard",
               "-n", "2", "--rootdir", str(tmp_path), "-o", "addopts=", str(tmp_path / "test_inner.py")]
    with open(tmp_path / "inner.log", "wb") as log:
        session = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        tag, family = wait_for_both(session.pid, deadline=time.monotonic() + 120)
        session.send_signal(signal.SIGTERM)
        returncode = session.wait(timeout=120)
    finally:
        if session.poll() is None:
            os.killpg(session.pid, signal.SIGKILL)
    assert survivors(family) == []
    found = debris.find(owner=tag)
    assert (found.folders, found.cgroups) == ([], [])
    assert returncode == pytest.ExitCode.INTERRUPTED, (tmp_path / "inner.log").read_text()


def wait_for_both(controller: int, deadline: float) -> tuple[str, dict]:
    """The harness's owner tag once its sandboxes run and the other test's sleeper is up; the family."""
    while time.monotonic() < deadline:
        family = descendants(controller)
        harness = [pid for pid, (_, cmd) in family.items() if "scibench_testing.busy_harness" in cmd
                   and not cmd.startswith("sh ")]
        sleepers = [pid for pid, (_, cmd) in family.items() if cmd == "sleep 120"]
        sandboxes = [pid for pid, (_, cmd) in family.items() if cmd.startswith("bwrap")]
        if harness and sleepers and len(sandboxes) >= 2:
            return debris.owner_tag(harness[0]), family
        time.sleep(0.2)
    raise AssertionError("the inner session never had its harness's two sandboxes and the sleeper running")
