"""A stop to `make run` reaches its harnesses: make -> flows.make_run -> dvc repro -> an `exec` harness stage.

Neither GNU make nor dvc passes a SIGTERM on to what it runs. The chain here is the real one but
for its ends: a stand-in for make (a Python parent that the test SIGTERMs, which dies of it at once,
as make does), `python -m flows.make_run` with its own cache and port, the real `dvc repro` of a
one-stage project whose stage is `exec python -m scibench_testing.busy_harness` (two sandboxes that
sleep), run through `/bin/sh -c` (dvc runs a stage with $SHELL; dash does not exec the command,
bash does: the harder case). Once the sandboxes run, the stand-in gets SIGTERM. Nothing may be left: no process of the
chain, no workspace or cgroup of the harness, no Prefect server of make_run's.
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
import yaml
from scibench_testing.processes import descendants, survivors
from scibench_testing.project import ROOT

from stages.ports import free_port
from stages.sandbox import debris

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
MAKE = "import subprocess, sys; subprocess.run(sys.argv[1:])"  # a parent that dies of SIGTERM, as make does


def one_stage_project(folder: Path) -> Path:
    (folder / "public").mkdir(parents=True)
    (folder / "public/table.csv").write_text("x\n1\n")
    stage = {"cmd": f"exec {sys.executable} -m scibench_testing.busy_harness 2 120 {folder / 'public'}",
             "deps": ["public"]}
    (folder / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"busy": stage}}))
    subprocess.run([str(Path(sys.executable).parent / "dvc"), "init", "--no-scm", "-q"], cwd=folder, check=True)
    return folder


def test_sigterm_to_make_ends_make_run_dvc_and_the_harness_and_leaves_nothing(tmp_path: Path) -> None:
    project = one_stage_project(tmp_path / "project")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}", "DVC_NO_ANALYTICS": "1", "SHELL": "/bin/sh",
           "PREFECT_HOME": str(tmp_path / "prefect"), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("PREFECT_API_URL", None)
    cache = tmp_path / "cache"
    command = [sys.executable, "-c", MAKE, sys.executable, "-m", "flows.make_run", "--cache", str(cache),
               "--port", str(free_port())]
    with open(tmp_path / "make.log", "wb") as log:
        make = subprocess.Popen(command, cwd=project, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        family = wait_for_sandboxes(make.pid, deadline=time.monotonic() + 240, log=tmp_path / "make.log")
        harness = next(pid for pid, (_, cmd) in family.items() if "busy_harness" in cmd and "bwrap" not in cmd)
        tag = debris.owner_tag(harness)
        make.send_signal(signal.SIGTERM)
        assert make.wait(timeout=30) == -signal.SIGTERM
        assert survivors(family, settle=15) == [], (tmp_path / "make.log").read_text()
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
    found = debris.find(owner=tag)
    assert (found.folders, found.cgroups) == ([], [])
    assert not (cache / "prefect-ui.json").exists()  # the server make_run started is stopped
    assert "stopped the Prefect server it started" in (tmp_path / "make.log").read_text()


def wait_for_sandboxes(root: int, deadline: float, log: Path) -> dict:
    """The chain's processes once two sandboxes (bwrap) run below `root`."""
    while time.monotonic() < deadline:
        family = descendants(root)
        if sum(cmd.startswith("bwrap") for _, cmd in family.values()) >= 2:
            return family
        time.sleep(0.3)
    raise AssertionError(f"no two sandboxes below the chain:\n{log.read_text()[-3000:]}")
