"""`make bench`, evaluation part: harness overhead, artifact reading, scoring throughput, LLM latency, Dask.

- `harness_overhead`: a trivial agent (`/bin/true`) on a staged query — workspace built from the
  public files, the sandbox started and torn down, answer and artifact collected, the query scored.
  The median over runs is the harness's own cost per query (target <= 0.1 s).
- `artifact_reading`: one typical artifact (a prediction per basin-day, 100 basins x 365 days)
  read `runs` times in this process (`parse_artifact`) and in a forked child under the memory bound
  (`read_artifact`, what the harness does). The medians and their difference: the child's cost
  per graded artifact, its fork, the pages it copies on write and its exit (target <= 0.1 s, no
  more than the harness's own budget per query above).
- `scoring_throughput`: ST-Bench scoring of synthetic journal results for a two-metric graded task
  (outcome, realistic filter, targets, references, reward), then the task and system summary with
  bootstrap intervals. Results per second over the whole batch (target >= 100,000). These are
  answers only: no artifact is parsed, so the forked reader of `stages.grading.confined` (one
  child per graded artifact) is not in this figure.
- `llm_latency`: an `llm` agent (ReAct: one `python` call that hands in an answer, then `submit`)
  through the whole harness (`flows.evaluate`, the sandbox, the loop in it, the proxy) against a
  scripted model server that answers every call after `latency_s`, with `concurrency` queries in
  flight. The flow run's time over the latency-bound ideal, ceil(queries / concurrency) x calls per
  query x latency (target <= 1.3).
- `dask_scaleout`: the oracle on the built benchmark's split through prefect-dask's
  DaskTaskRunner on a local cluster of 1, then 2 worker processes (1 thread each); the speedup
  t1 / t2 of the flow runs (target >= 1.7 on two cores). The oracle runs its script
  (`reuse_verify: false`): graded on the kept verify runs it would run nothing to scale out.
  Needs `processed/benchmark` (`make run`).

All write into `processed/metrics/bench_evaluation.json` beside the ingest figures. The last two
run `python -m flows.evaluate` in a temporary project against a local Prefect server of their own.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import math
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from benchmarks.runs import Run, number_task, prefect_env, run_evaluation, write_benchmark
from stages.catalog import TaskSpec
from stages.evaluation.agents.llm.scripted import Request, ScriptedLLM, Turn
from stages.evaluation.journal import Journal
from stages.evaluation.program import AgentProgram
from stages.evaluation.runner import run_query
from stages.grading.artifacts import parse_artifact, read_artifact
from stages.layout import BENCHMARK, CATALOG, METRICS, RUNS, journal_path
from stages.sandbox import SandboxLimits
from stages.scoring.aggregate import summarize
from stages.scoring.intervals import mean_interval, task_resamples
from stages.scoring.outcomes import Execution
from stages.scoring.query import Grading, score_query
from stages.yamlfile import read_yaml

TASK = CATALOG / "camels" / "camels-model-comparison" / "task.yaml"
LLM_AGENT = "llm_scripted"
ORACLE_RUNNING = {"kind": "oracle", "options": {"reuse_verify": False}}  # runs its script in a sandbox
CALLS_PER_QUERY = 2  # a `python` call that hands in the answer, then `submit`
ANSWER_CODE = "import json\njson.dump({'answer': 1}, open('work/answer.json', 'w'))\n"
MEASUREMENTS = ("harness_overhead", "artifact_reading", "scoring_throughput", "llm_latency", "dask_scaleout")


def harness_overhead(runs: int = 30) -> dict:
    """Median seconds of one query of a trivial agent through the whole harness path."""
    spec = TaskSpec.model_validate(read_yaml(TASK))
    gold = {"metrics": {metric.name: 0.6 for metric in spec.answer.metrics}}
    with tempfile.TemporaryDirectory(prefix="scibench-bench-harness-") as work:
        public = Path(work) / "public"
        public.mkdir()
        (public / "timeseries.parquet").write_bytes(b"PAR1" + bytes(4096) + b"PAR1")
        seconds, limits = [], SandboxLimits(wall_seconds=30).to_limits()
        for _ in range(runs):
            start = time.perf_counter()
            attempt = run_query("# prompt\n", public, AgentProgram(["/bin/true"]), limits,
                                hidden=[Path.cwd().resolve()], collect=(spec.artifact.file,))
            execution = Execution(attempt.exit_code, attempt.timed_out, attempt.infra_error, attempt.answer_text)
            score_query(spec.answer, execution, gold)
            seconds.append(time.perf_counter() - start)
            if attempt.infra_error:
                raise RuntimeError(f"harness overhead: the sandbox failed: {attempt.infra_error}")
    return {"runs": runs, "median_s": round(statistics.median(seconds), 4),
            "p90_s": round(sorted(seconds)[int(0.9 * (runs - 1))], 4), "target_s": 0.1}


def artifact_reading(runs: int = 200, basins: int = 100, days: int = 365) -> dict:
    """Median seconds to read one honest artifact in this process and in the forked child."""
    spec = TaskSpec.model_validate(read_yaml(TASK)).artifact
    ids = [f"{basin:08d}" for basin in range(basins)]
    dates = pd.date_range("2000-01-01", periods=days).astype("datetime64[ns]")
    required = pd.DataFrame({spec.key[0]: np.repeat(ids, days), spec.key[1]: np.tile(dates, basins)})
    values = {column: np.random.default_rng(0).random(len(required)) for column in spec.columns}
    buffer = io.BytesIO()
    required.assign(**values).to_parquet(buffer, index=False)
    data = buffer.getvalue()
    medians = {}
    for name, read in (("in_process", parse_artifact), ("child", read_artifact)):
        seconds = []
        for _ in range(runs):
            start = time.perf_counter()
            read(data, spec, required)
            seconds.append(time.perf_counter() - start)
        medians[name] = statistics.median(seconds)
    return {"runs": runs, "rows": len(required), "file_bytes": len(data),
            "in_process_s": round(medians["in_process"], 4), "child_s": round(medians["child"], 4),
            "overhead_s": round(medians["child"] - medians["in_process"], 4), "target_overhead_s": 0.1}


def synthetic_results(spec: TaskSpec, n: int, seed: int = 0) -> list[Execution]:
    """Journal-like results: 80 % answered with random metrics, 10 % failed runs, 10 % broken JSON."""
    rng = random.Random(seed)
    names = [metric.name for metric in spec.answer.metrics]
    results = []
    for _ in range(n):
        draw = rng.random()
        if draw < 0.8:
            results.append(Execution(0, False, None, json.dumps({"metrics": {n: rng.random() for n in names}})))
        elif draw < 0.9:
            results.append(Execution(1, False, None, None))
        else:
            results.append(Execution(0, False, None, "{broken"))
    return results


def scoring_throughput(n: int = 100_000, tasks: int = 100) -> dict:
    """Results scored per second, from journal results to the summary with its interval."""
    spec = TaskSpec.model_validate(read_yaml(TASK))
    names = [metric.name for metric in spec.answer.metrics]
    gold = {"metrics": {name: 0.6 for name in names}}
    grading = Grading({reference: {name: 0.3 for name in names} for reference in spec.reference_models}, None)
    results = synthetic_results(spec, n)
    start = time.perf_counter()
    per_task: dict[str, list] = {}
    for index, execution in enumerate(results):
        per_task.setdefault(f"task-{index % tasks:03d}", []).append(
            score_query(spec.answer, execution, gold, grading))
    summary = summarize(per_task)
    values = {task: [score.pass_rate for score in scores] for task, scores in per_task.items()}
    resampled = task_resamples({t: np.array(v) for t, v in values.items()}, 1000, 0)
    mean_interval(resampled, list(resampled), 0.95, 1000)
    seconds = time.perf_counter() - start
    return {"results": n, "tasks": tasks, "seconds": round(seconds, 3),
            "per_second": round(n / seconds), "target_per_second": 100_000, "score": summary["score"]}


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


def write_params(project: Path, params: dict, agents: dict | None = None, dask_address: str | None = None) -> None:
    """The project's params.yaml: `params` with more agents and the Dask scheduler set."""
    changed = {**params, "agents": {**params["agents"], **(agents or {})},
               "evaluate": {**params["evaluate"], "dask_address": dask_address}}
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
                latency_s: float = 1.0) -> dict:
    """An llm agent on `queries` hand-made queries against a model that answers after `latency_s`."""
    project = work / "llm"
    write_benchmark(project / BENCHMARK, {"bench": number_task("bench")}, [
        {"query_id": f"q{n:04d}", "task_id": "bench", "scope": f"s{n}", "prompt": f"# bench\n\nQUERY {n}\n",
         "files": {"README.md": "nothing to read\n"}} for n in range(queries)])
    with ScriptedLLM(scripted_react(latency_s)) as model:
        options = {"strategy": "react", "model": "scripted", "base_url": model.base_url, "api_key_env": None,
                   "max_turns": 4, "per_call_timeout_s": 60 + latency_s}
        write_params(project, params, {LLM_AGENT: {"kind": "llm", "concurrency": concurrency, "options": options}})
        run = run_evaluation(project, LLM_AGENT, "test", env)
        calls = len(model.requests)
    ideal = latency_bound_ideal(queries, concurrency, CALLS_PER_QUERY, latency_s)
    return {"queries": queries, "concurrency": concurrency, "latency_s": latency_s,
            "calls_per_query": CALLS_PER_QUERY, "calls": calls, **run_figures(run, project, LLM_AGENT),
            "ideal_s": ideal, "ratio": ratio(run.flow_s, ideal), "process_ratio": ratio(run.process_s, ideal),
            "target_ratio": 1.3}


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


def measure(names: tuple[str, ...], params: dict, benchmark: Path) -> dict:
    """Run the named measurements; the last two share one local Prefect server."""
    results: dict = {}
    if "harness_overhead" in names:
        results["harness_overhead"] = harness_overhead()
    if "artifact_reading" in names:
        results["artifact_reading"] = artifact_reading()
    if "scoring_throughput" in names:
        results["scoring_throughput"] = scoring_throughput()
    if {"llm_latency", "dask_scaleout"} & set(names):
        with tempfile.TemporaryDirectory(prefix="scibench-bench-flows-") as work, prefect_env(Path(work)) as env:
            if "llm_latency" in names:
                results["llm_latency"] = llm_latency(params, env, Path(work))
            if "dask_scaleout" in names:
                try:
                    project = oracle_project(Path(work), benchmark)
                except FileNotFoundError as missing:
                    results["dask_scaleout"] = {"skipped": str(missing)}
                else:
                    split = params["evaluate"]["split"]
                    running = {**params, "agents": {**params["agents"], "oracle": ORACLE_RUNNING}}
                    results["dask_scaleout"] = dask_scaleout(project, "oracle", split, running, env)
    return results


def describe(results: dict) -> list[str]:
    """The lines `main` prints."""
    lines = []
    if "harness_overhead" in results:
        overhead = results["harness_overhead"]
        lines.append(f"harness overhead per query: {overhead['median_s']} s median (target <= {overhead['target_s']})")
    if "artifact_reading" in results:
        reading = results["artifact_reading"]
        lines.append(f"artifact reading ({reading['rows']} rows): {reading['in_process_s']} s in process, "
                     f"{reading['child_s']} s in the child, overhead {reading['overhead_s']} s median "
                     f"(target <= {reading['target_overhead_s']})")
    if "scoring_throughput" in results:
        scoring = results["scoring_throughput"]
        lines.append(f"scoring: {scoring['per_second']} results/s (target >= {scoring['target_per_second']})")
    if "llm_latency" in results:
        llm = results["llm_latency"]
        lines.append(f"llm evaluation: {llm['queries']} queries, {llm['concurrency']} in flight, "
                     f"{llm['calls_per_query']} calls of {llm['latency_s']} s each: flow {llm['flow_s']} s "
                     f"(process {llm['process_s']} s) vs ideal {llm['ideal_s']} s, ratio {llm['ratio']} "
                     f"(target <= {llm['target_ratio']}); {llm['in_flight']} in flight on average, "
                     f"machine cores busy {llm['busy_cores']}")
    if "dask_scaleout" in results:
        dask = results["dask_scaleout"]
        if "skipped" in dask:
            lines.append(f"dask scale-out: skipped: {dask['skipped']}")
        else:
            one, two = dask["runs"]
            lines.append(f"dask scale-out: {dask['agent']} on {one['records']} {dask['split']} queries: "
                         f"1 worker {dask['t1_s']} s, 2 workers {dask['t2_s']} s, speedup {dask['speedup']} "
                         f"(target >= {dask['target_speedup']}); in flight {one['in_flight']}, {two['in_flight']}; "
                         f"machine cores busy {one['busy_cores']}, {two['busy_cores']}")
    return lines


def main() -> None:
    """`python -m benchmarks.evaluation`: measure and write the figures (`--only` keeps the others)."""
    from stages.hashing import write_json

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=MEASUREMENTS, action="append")
    args = parser.parse_args()
    params = read_yaml(Path("params.yaml"))
    results = measure(tuple(args.only or MEASUREMENTS), params, BENCHMARK)
    out = METRICS / "bench_evaluation.json"
    kept = json.loads(out.read_text()) if args.only and out.exists() else {}
    write_json(out, {**kept, **results})
    for line in describe(results):
        print(line)


if __name__ == "__main__":
    main()
