"""Specification of the evaluation bench's LLM-latency and Dask scale-out measurements.

The pure parts are checked with exact values. Each measurement then runs once at a tiny size
against one local Prefect server (about 40-60 s on two shared cores), and the test counts what it
did: journal records, answers and model calls. How fast the harness is, `make bench` measures;
the tests do not assert it.
"""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from scibench_testing.project import ROOT

from benchmarks.evaluation import describe
from benchmarks.evaluation.harness import artifact_reading
from benchmarks.evaluation.scaling import (
    ANSWER_CODE,
    dask_scaleout,
    latency_bound_ideal,
    llm_latency,
    marginal_cpu,
    oracle_project,
    ratio,
    scripted_react,
)
from benchmarks.runs import number_task, prefect_env, write_benchmark
from stages.evaluation.agents.llm.scripted import Request
from stages.layout import BENCHMARK

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None,
                                 reason="bubblewrap (bwrap) is not installed: the sandbox needs it")
# A command agent doing a fixed amount of real work per query (no braces: the command is formatted).
SPIN = {"kind": "command", "options": {"cmd": "python -c \"import json; n = sum(i * i for i in range(200000)); "
                                              "json.dump(dict(answer=n % 97), open('work/answer.json', 'w'))\""}}
RUN_FIGURES = {"process_s", "flow_s", "busy_cores", "records", "answered", "query_s", "in_flight"}
LLM_FIGURES = {"queries", "concurrency", "latency_s", "task_runs", "calls_per_query", "calls", "ideal_s", "ratio",
               "process_ratio", "target_ratio", "harness_cpu_s", "harness_cpu_per_call_ms", "target_cpu_per_call_ms",
               "peak_rss_mb", "target_peak_rss_mb"} | RUN_FIGURES
DASK_FIGURES = {"agent", "split", "runs", "t1_s", "t2_s", "speedup", "process_speedup", "target_speedup"}


def test_the_latency_bound_ideal_counts_waves_of_queries_in_flight():
    assert latency_bound_ideal(64, 32, 2, 1.0) == 4.0
    assert latency_bound_ideal(65, 32, 2, 1.0) == 6.0
    assert latency_bound_ideal(96, 32, 3, 0.5) == 4.5
    assert latency_bound_ideal(1, 32, 2, 1.0) == 2.0


def test_a_ratio_is_measured_over_ideal_to_two_decimals():
    assert (ratio(5.2, 4.0), ratio(8.0, 4.0), ratio(1.0, 3.0)) == (1.3, 2.0, 0.33)


def test_the_scripted_model_runs_code_that_answers_then_submits_each_after_its_latency():
    reply = scripted_react(0.5)
    task = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "QUERY 3"}]}
    first = reply(Request("/v1/chat/completions", {}, task))
    ran = {"messages": [*task["messages"], {"role": "tool", "content": "exit code 0"}]}
    second = reply(Request("/v1/chat/completions", {}, ran))
    assert (first.tool_calls, first.delay) == ([("python", json.dumps({"code": ANSWER_CODE}))], 0.5)
    assert (second.tool_calls, second.delay) == ([("submit", "{}")], 0.5)


def test_the_marginal_cpu_per_call_is_the_slope_between_two_runs():
    small = {"harness_cpu_s": 5.0, "calls": 128}
    large = {"harness_cpu_s": 13.0, "calls": 512}
    assert marginal_cpu(small, large) == {"per_call_ms": 20.8, "target_cpu_per_call_ms": 20, "fixed_s": 2.33,
                                          "calls": [128, 512]}
    assert describe({"llm_marginal_cpu": marginal_cpu(small, large)}) == [
        "llm harness CPU per call beyond start-up: 20.8 ms (target <= 20); start-up 2.33 s"]


def test_the_dask_measurement_says_what_to_run_when_no_benchmark_is_built(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"run `make run` first"):
        oracle_project(tmp_path, tmp_path / "processed/benchmark")


def test_each_measurement_is_one_printed_line():
    results = {
        "llm_latency": {"queries": 64, "concurrency": 32, "calls_per_query": 2, "latency_s": 1.0, "flow_s": 5.0,
                        "process_s": 8.5, "ideal_s": 4.0, "ratio": 1.25, "target_ratio": 1.3, "busy_cores": 1.9,
                        "in_flight": 27.5, "harness_cpu_per_call_ms": 12.5, "peak_rss_mb": 310.2},
        "dask_scaleout": {"agent": "oracle", "split": "test", "t1_s": 90.0, "t2_s": 50.0, "speedup": 1.8,
                          "target_speedup": 1.7, "runs": [{"records": 18, "busy_cores": 1.1, "in_flight": 0.98},
                                                          {"records": 18, "busy_cores": 2.0, "in_flight": 1.9}]},
    }
    assert describe(results) == [
        "llm evaluation (a task run each): 64 queries, 32 in flight, 2 calls of 1.0 s each: flow 5.0 s (process "
        "8.5 s) vs ideal 4.0 s, ratio 1.25 (target <= 1.3); 27.5 in flight on average, harness CPU 12.5 ms a call "
        "(target <= 20), "
        "peak 310.2 MB (target <= 1024), machine cores busy 1.9",
        "dask scale-out: oracle on 18 test queries: 1 worker 90.0 s, 2 workers 50.0 s, speedup 1.8 "
        "(target >= 1.7); in flight 0.98, 1.9; machine cores busy 1.1, 2.0",
    ]
    assert describe({"dask_scaleout": {"skipped": "no built benchmark"}}) == [
        "dask scale-out: skipped: no built benchmark"]


def test_artifact_reading_times_one_file_in_process_and_in_the_child():
    figures = artifact_reading(runs=3, basins=2, days=3)
    assert (figures["runs"], figures["rows"], figures["target_overhead_s"]) == (3, 6, 0.1)
    assert figures["in_process_s"] > 0 and figures["child_s"] > 0
    assert figures["overhead_s"] == pytest.approx(figures["child_s"] - figures["in_process_s"], abs=2e-4)
    figures.update(in_process_s=0.03, child_s=0.06, overhead_s=0.03)
    assert describe({"artifact_reading": figures}) == [
        "artifact reading (6 rows): 0.03 s in process, 0.06 s in the child, overhead 0.03 s median "
        "(target <= 0.1)"]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with prefect_env(tmp_path_factory.mktemp("prefect")) as env:
        yield env


@needs_bwrap
def test_an_llm_run_makes_two_calls_per_query_and_journals_every_query(env, tmp_path):
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    result = llm_latency(params, env, tmp_path, queries=4, concurrency=2, latency_s=0.1)
    assert set(result) == LLM_FIGURES
    assert (result["records"], result["answered"], result["calls"]) == (4, 4, 8)
    assert (result["ideal_s"], result["ratio"]) == (latency_bound_ideal(4, 2, 2, 0.1),
                                                    ratio(result["flow_s"], result["ideal_s"]))
    assert 0 < result["flow_s"] < result["process_s"]
    assert 0 < result["harness_cpu_per_call_ms"] and 0 < result["peak_rss_mb"]


@pytest.mark.slow  # two Dask clusters and two Prefect flows (~30 s); the runner's Dask path is in the default suite
@needs_bwrap
def test_a_dask_scaleout_runs_every_query_once_on_one_then_two_workers(env, tmp_path):
    pytest.importorskip("distributed")
    project = tmp_path / "project"
    write_benchmark(project / BENCHMARK, {"spin": number_task("spin")}, [
        {"query_id": f"q{n}", "task_id": "spin", "scope": f"s{n}", "prompt": "# spin\n"} for n in range(3)])
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["agents"]["spin"] = SPIN
    result = dask_scaleout(project, "spin", "test", params, env)
    assert set(result) == DASK_FIGURES and all(set(run) == RUN_FIGURES | {"workers"} for run in result["runs"])
    assert [(run["workers"], run["records"], run["answered"]) for run in result["runs"]] == [(1, 3, 3), (2, 3, 3)]
    assert (result["t1_s"], result["t2_s"]) == (result["runs"][0]["flow_s"], result["runs"][1]["flow_s"])
    assert result["speedup"] == round(result["t1_s"] / result["t2_s"], 2)
    assert yaml.safe_load((project / "params.yaml").read_text())["evaluate"]["dask_address"].startswith("tcp://")
