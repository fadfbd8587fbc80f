"""SDA generation on worker processes (the default) or an existing Dask cluster (`generate.dask_address`).

Each scenario is a Prefect task (simulate its dataset, try every template on it); worker processes
or a cluster's workers run them and this process selects and writes. Either way the files are those
an in-process build writes. A local two-worker cluster stands in for a remote one; a smaller
dataset and one binding attempt per template keep the runs short.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from prefect.settings import get_current_settings
from prefect.testing.utilities import prefect_test_harness
from scibench_testing.files import folder_sha256
from scibench_testing.processes import descendants, survivors
from scibench_testing.project import ROOT, offline_env

from flows.generate import generate_sda
from flows.runners import task_runner
from stages.generate.sda import load_scenarios
from stages.generate.sda.build import build, write
from stages.generate.sda.scenario import DOMAINS
from stages.params import SdaParams

SETTINGS = SdaParams(n_rows=50, attempts=1)


@pytest.fixture(scope="module")
def prefect_api():
    """A temporary Prefect server (SQLite) for the flow runs here; the workers reach it too."""
    with prefect_test_harness():
        yield


@pytest.mark.slow  # ~60 s, an opt-in runner (generate.dask_address): pytest -m slow
def test_the_scenarios_run_on_a_dask_cluster_and_the_files_are_those_threads_write(tmp_path, prefect_api):
    distributed = pytest.importorskip("distributed")
    on_threads = generate_sda.with_options(task_runner=task_runner(None, 2))("tiny", SETTINGS, tmp_path / "threads")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as cluster:
        runner = task_runner(cluster.scheduler_address, 2)
        on_dask = generate_sda.with_options(task_runner=runner)("tiny", SETTINGS, tmp_path / "dask")
        with distributed.Client(cluster) as client:
            prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert prefixes == ["on_scenario"]  # every scenario went through the cluster's scheduler
    assert on_threads["instances"] > 0
    assert on_dask == on_threads
    assert folder_sha256(tmp_path / "dask") == folder_sha256(tmp_path / "threads")


def test_the_scenarios_run_on_worker_processes_and_give_the_instances_of_an_in_process_build(tmp_path, prefect_api):
    on_processes = generate_sda.with_options(task_runner=task_runner(None, 2, processes=True))(
        "tiny", SETTINGS, tmp_path / "processes")
    tiny = [next(s for s in load_scenarios() if s.domain == domain) for domain in DOMAINS]  # one per domain
    in_process = build(SETTINGS, "tiny", tiny)
    assert on_processes == write(in_process, tmp_path / "in_process")
    answers = pd.read_parquet(tmp_path / "processes" / "private" / "answers.parquet")
    assert len(in_process.instances) > 0
    assert list(answers["instance_id"]) == [instance["instance_id"] for instance in in_process.instances]
    assert [json.loads(answer) for answer in answers["answer"]] == [i["answer"] for i in in_process.instances]
    assert folder_sha256(tmp_path / "processes") == folder_sha256(tmp_path / "in_process")


KILLED_FLOW = """
import sys
from pathlib import Path
from flows.generate import generate_sda
from flows.runners import task_runner
from stages.params import SdaParams
generate_sda.with_options(task_runner=task_runner(None, 2, processes=True))("tiny", SdaParams(), Path(sys.argv[1]))
"""


def test_a_killed_flow_process_leaves_no_scenario_worker_behind(tmp_path, prefect_api):
    env = offline_env(tmp_path) | {"PYTHONPATH": str(ROOT), "PREFECT_API_URL": get_current_settings().api.url}
    flow = subprocess.Popen([sys.executable, "-c", KILLED_FLOW, str(tmp_path / "out")], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while len(workers := spawned(family := descendants(flow.pid))) < 2:
        if flow.poll() is not None or time.monotonic() > deadline:
            os.killpg(flow.pid, signal.SIGKILL)
            pytest.fail(f"the two scenario workers never ran together: {workers}")
        time.sleep(0.1)
    time.sleep(3)  # the workers import the project and start on a scenario (the default rows and attempts)
    os.kill(flow.pid, signal.SIGKILL)
    flow.wait()
    assert survivors(family, settle=10.0) == []  # the workers, and the resource tracker they kept open


def spawned(family: dict[int, tuple[str, str]]) -> list[str]:
    """The command lines of multiprocessing's spawned workers among `family`."""
    return [cmdline for _, cmdline in family.values() if "spawn_main" in cmdline]
