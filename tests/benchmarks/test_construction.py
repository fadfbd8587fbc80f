"""Specification of the construction bench's Dask scale-out measurement.

The pure parts are checked with exact values. The measurement then runs once on two control tasks
of the tiny profile (about 90 s on two shared cores), and the test counts what it built. How fast
the construction scales, `make bench` measures; the test does not assert it.
"""

from __future__ import annotations

import shutil

import pytest
import yaml
from scibench_testing.domains import profile_repository
from scibench_testing.project import ROOT

from benchmarks.construction import describe_scaleout, measure_scaleout, scaleout_params

SCALEOUT_FIGURES = {"profile", "runs", "t1_s", "t2_s", "speedup", "process_speedup", "same_benchmark",
                    "target_speedup"}
RUN_FIGURES = {"workers", "process_s", "flow_s", "busy_cores", "tasks", "queries", "benchmark_id"}


def test_the_scaleout_builds_the_named_tasks_on_the_cluster_and_runs_every_annotator():
    params = {"profile": "default", "construct": {"domains": ["control"], "tasks": [], "concurrency": 2,
                                                  "resume_dir": ".cache/construct"}}
    assert scaleout_params(params, ["control-a", "control-b"], "tcp://127.0.0.1:8786") == {
        "profile": "default", "construct": {"domains": ["control"], "tasks": ["control-a", "control-b"],
                                            "concurrency": 2, "resume_dir": "",
                                            "dask_address": "tcp://127.0.0.1:8786"}}
    assert scaleout_params(params, [], "tcp://127.0.0.1:8786")["construct"]["tasks"] == []  # every task
    assert params["construct"]["resume_dir"] == ".cache/construct"  # the project's params are left alone


def test_without_the_aligned_repositories_the_scaleout_is_skipped_and_says_why(tmp_path):
    result = measure_scaleout({"construct": {"domains": ["control", "camels"]}}, tmp_path, [])
    assert result == {"skipped": f"no aligned repositories ['control', 'camels'] in {tmp_path}: run `make run` first"}
    assert describe_scaleout(result) == f"dask scale-out: skipped: {result['skipped']}"


@pytest.mark.slow  # two Dask clusters and two construction flows (~90 s)
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed: the sandbox needs it")
def test_a_dask_scaleout_builds_the_same_benchmark_on_one_then_two_workers(tmp_path):
    pytest.importorskip("distributed")
    repository = profile_repository("control", tmp_path / "data", ROOT / "params.yaml")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["profile"] = "tiny"
    params["construct"] |= {"domains": ["control"], "queries_per_task": {"tiny": 3, "default": 1, "full": 22}}
    result = measure_scaleout(params, repository.parent, ["control-driver-attribution", "control-linear-holdout"])
    assert set(result) == SCALEOUT_FIGURES and all(set(run) == RUN_FIGURES for run in result["runs"])
    assert [(run["workers"], run["tasks"], run["queries"]) for run in result["runs"]] == [(1, 2, 6), (2, 2, 6)]
    assert result["same_benchmark"] is True
    assert (result["t1_s"], result["t2_s"]) == (result["runs"][0]["flow_s"], result["runs"][1]["flow_s"])
    assert result["speedup"] == round(result["t1_s"] / result["t2_s"], 2)
    assert describe_scaleout(result).startswith("dask scale-out: construction of 2 tasks, 6 queries (tiny): 1 worker")
