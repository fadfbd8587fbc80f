"""SDA generation on worker processes (the default) or an existing Dask cluster (`generate.dask_address`).

Each scenario is a Prefect task (simulate its dataset, try every template on it); worker processes
or a cluster's workers run them and this process selects and writes. Either way the files are those
an in-process build writes. A local two-worker cluster stands in for a remote one; a smaller
dataset and one binding attempt per template keep the runs short.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from prefect.testing.utilities import prefect_test_harness
from scibench_testing.files import folder_sha256

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
