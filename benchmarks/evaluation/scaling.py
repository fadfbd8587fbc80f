"""`make bench`, measurements of flow runs: an LLM agent's latency, and the Dask scale-out.

Each runs `python -m flows.evaluate` in a temporary project against a local Prefect server (the
package's docstring says what each measures and its target).
"""

from __future__ import annotations

import importlib
import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path

import yaml

from benchmarks.runs import Run, number_task, run_evaluation, write_benchmark
from stages.evaluation.agents.llm.scripted import Request, ScriptedLLM, Turn
from stages.evaluation.journal import Journal
from stages.layout import BENCHMARK, RUNS, journal_path

LLM_AGENT = "llm_scripted"
CALLS_PER_QUERY = 2  # a `python` call that hands in the answer, then `submit`
ANSWER_CODE = "import json\njson.dump({'answer': 1}, open('work/answer.json', 'w'))\n"


def latency_bound_ideal(queries: int, concurrency: int, calls_per_query: int, latency_s: float) -> float:
    """Seconds a run takes when only the model's latency counts: waves of `concurrency` queries."""
    return math.ceil(queries / concurrency) * calls_per_query * latency_s


def ratio(seconds: float, ideal: float) -> float:
    """Measured over ideal, to two decimals."""
    return round(seconds / ideal, 2)


def scripted_react(latency_s: float) -> Callable[[Request], Turn]:
    """The bench's model: a `python` call that writes the answer, then `submit`, each after `latency_s`."""
    def reply(request: Request) -> Turn:
        if request.body["messages"][-1]["role"] == "tool":
            return Turn(tool_calls=[("submit", "{}")], delay=latency_s)
        return Turn(tool_calls=[("python", json.dumps({"code": ANSWER_CODE}))], delay=latency_s)
    return reply


def write_params(project: Path, params: dict, agents: dict | None = None, dask_address: str | None = None,
                 task_runs: bool = True) -> None:
    """The project's params.yaml: `params` with more agents, the Dask scheduler and `query_task_runs` set."""
    changed = {**params, "agents": {**params["agents"], **(agents or {})},
               "evaluate": {**params["evaluate"], "dask_address": dask_address, "query_task_runs": task_runs}}
    (project / "params.yaml").write_text(yaml.safe_dump(changed, sort_keys=False))


def run_figures(run: Run, project: Path, agent: str) -> dict:
    """A run's times, and what its journal holds: records, answers, summed query walls and in flight.

    `in_flight` is the summed wall time of the queries over the flow's: how many ran at once on
    average (the task runner's slots kept busy, whether or not the cores were free to run them).
    """
    records = Journal(journal_path(project / RUNS, agent)).latest().values()
    query_s = sum(record.wall_seconds for record in records)
    return {"process_s": run.process_s, "flow_s": run.flow_s, "busy_cores": run.busy_cores,
            "records": len(records), "answered": sum(record.answer_text is not None for record in records),
            "query_s": round(query_s, 2), "in_flight": round(query_s / run.flow_s, 2)}


def llm_latency(params: dict, env: dict[str, str], work: Path, queries: int = 64, concurrency: int = 32,
                latency_s: float = 1.0, target_ratio: float = 1.3, task_runs: bool = True) -> dict:
    """An llm agent on `queries` hand-made queries against a model that answers after `latency_s`.

    Besides the time over the ideal: the flow process's own CPU per model call (its threads, not the
    kernels' sandboxes; target <= 20 ms) and its peak resident memory. `task_runs`: a Prefect task
    run per query (the default), or the flow's own threads and a progress bar.
    """
    project = work / f"llm{concurrency}{'' if task_runs else '-threads'}"
    write_benchmark(project / BENCHMARK, {"bench": number_task("bench")}, [
        {"query_id": f"q{n:04d}", "task_id": "bench", "scope": f"s{n}", "prompt": f"# bench\n\nQUERY {n}\n",
         "files": {"README.md": "nothing to read\n"}} for n in range(queries)])
    with ScriptedLLM(scripted_react(latency_s)) as model:
        options = {"strategy": "react", "model": "scripted", "base_url": model.base_url, "api_key_env": None,
                   "max_turns": 4, "per_call_timeout_s": 60 + latency_s}
        write_params(project, params, {LLM_AGENT: {"kind": "llm", "concurrency": concurrency, "options": options}},
                     task_runs=task_runs)
        run = run_evaluation(project, LLM_AGENT, "test", env)
        calls = len(model.requests)
    ideal = latency_bound_ideal(queries, concurrency, CALLS_PER_QUERY, latency_s)
    return {"queries": queries, "concurrency": concurrency, "latency_s": latency_s, "task_runs": task_runs,
            "calls_per_query": CALLS_PER_QUERY, "calls": calls, **run_figures(run, project, LLM_AGENT),
            "ideal_s": ideal, "ratio": ratio(run.flow_s, ideal), "process_ratio": ratio(run.process_s, ideal),
            "target_ratio": target_ratio, "harness_cpu_s": run.own_cpu_s,
            "harness_cpu_per_call_ms": round(1000 * run.own_cpu_s / max(calls, 1), 1),
            "target_cpu_per_call_ms": 20, "peak_rss_mb": run.peak_rss_mb, "target_peak_rss_mb": 1024}


def marginal_cpu(small: dict, large: dict) -> dict:
    """The flow process's CPU per model call beyond its fixed start-up, from two `llm_latency` runs.

    `harness_cpu_per_call_ms` divides all of a run's CPU by its calls, imports of the flow's
    libraries included (seconds, once per run); the slope between a small and a large run is what
    one more call costs, and the intercept what a run costs before its first.
    """
    per_call = (large["harness_cpu_s"] - small["harness_cpu_s"]) / (large["calls"] - small["calls"])
    return {"per_call_ms": round(1000 * per_call, 1), "target_cpu_per_call_ms": 20,
            "fixed_s": round(small["harness_cpu_s"] - per_call * small["calls"], 2),
            "calls": [small["calls"], large["calls"]]}


def oracle_project(work: Path, benchmark: Path) -> Path:
    """A project folder whose benchmark is the built one (linked), for evaluation runs of its own."""
    if not (benchmark / "queries.parquet").exists():
        raise FileNotFoundError(f"no built benchmark at {benchmark}: run `make run` first")
    project = work / "dask"
    (project / BENCHMARK).parent.mkdir(parents=True)
    (project / BENCHMARK).symlink_to(benchmark.resolve())
    return project


def dask_scaleout(project: Path, agent: str, split: str, params: dict, env: dict[str, str]) -> dict:
    """`agent` on `split` through a local Dask cluster of 1, then 2 worker processes: t1 / t2.

    The workers import the flow's module before the clock starts, as a long-lived cluster's have.
    """
    import distributed  # only for this measurement

    runs = []
    for workers in (1, 2):
        shutil.rmtree(project / RUNS, ignore_errors=True)
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, host="127.0.0.1") as cluster:
            with distributed.Client(cluster) as client:
                client.run(importlib.import_module, "flows.evaluate")
            write_params(project, params, dask_address=cluster.scheduler_address)
            run = run_evaluation(project, agent, split, env)
        runs.append({"workers": workers, **run_figures(run, project, agent)})
    one, two = runs
    return {"agent": agent, "split": split, "runs": runs, "t1_s": one["flow_s"], "t2_s": two["flow_s"],
            "speedup": round(one["flow_s"] / two["flow_s"], 2),
            "process_speedup": round(one["process_s"] / two["process_s"], 2), "target_speedup": 1.7}
