"""`evaluate.query_task_runs: false`: the queries run on the flow's own threads, no task run each,
and the flow run shows a progress artifact that ends at 100 %; every query is journaled once."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.request

import pytest
from scibench_testing.crash import expected_keys, flow_env, journal_state, mini_benchmark
from scibench_testing.prefect_server import own_prefect_server

from stages.params import EvaluateParams

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


def api(url: str, path: str, body: dict) -> list[dict]:
    request = urllib.request.Request(f"{url}/{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def test_without_task_runs_the_queries_run_on_threads_and_the_run_shows_its_progress(tmp_path):
    with own_prefect_server(tmp_path) as server:
        project = mini_benchmark(tmp_path / "project", tasks=2, queries_per_task=3, sleep_s=0.1,
                                 evaluate={"query_task_runs": False})
        done = subprocess.run([sys.executable, "-m", "flows.evaluate", "steady"], cwd=project,
                              env=flow_env(tmp_path, server.api_url),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "evaluate@steady on test: 6 queries, ran 6, 0 already in the journal" in done.stdout
        runs = api(server.api_url, "flow_runs/filter", {"flow_runs": {"name": {"any_": ["evaluate steady on test"]}}})
        task_runs = api(server.api_url, "task_runs/filter", {"flow_runs": {"id": {"any_": [runs[0]["id"]]}}})
        progress = api(server.api_url, "artifacts/filter",
                       {"artifacts": {"key": {"any_": ["evaluate-steady-test-progress"]}}})
    assert (len(runs), runs[0]["state_type"], task_runs) == (1, "COMPLETED", [])
    assert [(artifact["type"], artifact["data"]) for artifact in progress] == [("progress", 100.0)]
    state = journal_state(project / "processed/runs/steady/journal.jsonl")
    assert (state.lost(expected_keys(project, "steady", "test")), state.duplicated(), state.unreadable) == (0, 0, [])


def test_a_dask_cluster_needs_task_runs():
    with pytest.raises(ValueError, match="evaluate.dask_address runs queries as Prefect task runs"):
        EvaluateParams(agents=["oracle"], dask_address="tcp://127.0.0.1:8786", query_task_runs=False)
