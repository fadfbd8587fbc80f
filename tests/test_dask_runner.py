"""Evaluation on an existing Dask cluster (prefect-dask's DaskTaskRunner at `evaluate.dask_address`).

A local two-worker cluster stands in for a remote one: the flow connects to its scheduler address,
the queries run in the workers' processes, and the flow process alone writes the journal.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from scibench_testing.crash import expected_keys, flow_env, journal_state, mini_benchmark
from scibench_testing.prefect_server import start_prefect_server
from scibench_testing.project import offline_env

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) is not installed: the sandbox needs it")


@pytest.mark.slow  # ~35 s, an opt-in runner (evaluate.dask_address): pytest -m slow
def test_an_evaluation_on_a_dask_cluster_runs_every_query_once_in_the_workers(tmp_path):
    distributed = pytest.importorskip("distributed")
    home = tmp_path / "prefect"
    home.mkdir()
    server = start_prefect_server(offline_env(home), home)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, host="127.0.0.1")
    try:
        project = mini_benchmark(tmp_path / "project", tasks=2, queries_per_task=2, sleep_s=0.2,
                                 evaluate={"dask_address": cluster.scheduler_address})
        done = subprocess.run([sys.executable, "-m", "flows.evaluate", "steady"], cwd=project,
                              env=flow_env(tmp_path, server.api_url),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "evaluate@steady on test: 4 queries, ran 4, 0 already in the journal" in done.stdout
        state = journal_state(project / "processed/runs/steady/journal.jsonl")
        keys = expected_keys(project, "steady", "test")
        assert (state.lost(keys), state.duplicated(), state.unreadable) == (0, 0, [])
        with distributed.Client(cluster) as client:
            prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
        assert prefixes == ["run_one"]  # every query went through the cluster's scheduler
    finally:
        cluster.close()
        server.stop()
