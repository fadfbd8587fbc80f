"""Construction on an existing Dask cluster (`construct.dask_address`): the benchmark threads build.

A local two-worker cluster stands in for a remote one. Its workers start in the checkout, not in
the project the flow runs in, so a label task that named its files relative to the flow's folder
would find nothing there: the tasks are given the project root. The flow process aligns; the
workers label and verify, and the benchmark both runners write must be the same, byte for byte.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from scibench_testing.domains import profile_repository
from scibench_testing.files import folder_sha256
from scibench_testing.prefect_server import start_prefect_server
from scibench_testing.project import ROOT, offline_env

from stages.layout import BENCHMARK, CATALOG, REPOSITORIES

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) is not installed: the sandbox needs it")

DOMAIN = "control"
TASKS = ["control-driver-attribution", "control-linear-holdout"]  # ~1 s per annotator run
QUERIES_PER_TASK = 3


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The control domain's repository at the tiny profile, built as synthesize, ingest and align do."""
    return profile_repository(DOMAIN, tmp_path_factory.mktemp("control"), ROOT / "params.yaml")


def project(folder: Path, repository: Path, dask_address: str | None) -> Path:
    """A project holding the control catalog, the repository (linked) and params for two tasks."""
    shutil.copytree(ROOT / CATALOG / DOMAIN, folder / CATALOG / DOMAIN, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / REPOSITORIES).mkdir(parents=True)
    (folder / REPOSITORIES / DOMAIN).symlink_to(repository)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["profile"] = "tiny"
    params["construct"] |= {"domains": [DOMAIN], "tasks": TASKS, "resume_dir": "", "dask_address": dask_address,
                            "queries_per_task": {"tiny": QUERIES_PER_TASK, "default": 1, "full": 22}}
    (folder / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return folder


def build(folder: Path, env: dict[str, str]) -> str:
    """Run the construct stage's entry point in `folder`; its last stdout line."""
    done = subprocess.run([sys.executable, "-m", "flows.construct"], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.slow  # ~60 s, an opt-in runner (construct.dask_address): pytest -m slow
def test_a_construction_on_a_dask_cluster_writes_the_benchmark_threads_write(tmp_path, repository):
    distributed = pytest.importorskip("distributed")
    home = tmp_path / "prefect"
    home.mkdir()
    server = start_prefect_server(offline_env(home), home)
    env = offline_env(tmp_path) | {"PYTHONPATH": str(ROOT), "PREFECT_API_URL": server.api_url}
    try:
        on_threads = project(tmp_path / "threads", repository, None)
        threads_line = build(on_threads, env)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                      host="127.0.0.1") as cluster:
            on_dask = project(tmp_path / "dask", repository, cluster.scheduler_address)
            dask_line = build(on_dask, env)
            with distributed.Client(cluster) as client:
                prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    finally:
        server.stop()
    assert prefixes == ["label"]  # every query's label (and its verify, nested) ran in the workers
    for built in (on_threads, on_dask):  # every drawn query verified: none lost to a worker's trouble
        queries = pd.read_parquet(built / BENCHMARK / "queries.parquet")
        assert queries.groupby("task_id").size().to_dict() == dict.fromkeys(TASKS, QUERIES_PER_TASK)
    bench_id = json.loads((on_threads / BENCHMARK / "benchmark.json").read_text())["benchmark_id"]
    assert threads_line == dask_line == f"construct: benchmark {bench_id} written to {BENCHMARK}"
    assert folder_sha256(on_dask / BENCHMARK) == folder_sha256(on_threads / BENCHMARK)
