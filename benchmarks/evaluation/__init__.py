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
  answers only: no artifact is parsed, so the forked reader of `stages.scoring.query.confined` (one
  child per graded artifact) is not in this figure.
- `kernel_steps`: a query's kernel (`stages.sandbox.kernel`): its start, and the median of a code
  step (a small pandas frame, printed) once pandas is imported, against a fresh `python` that
  imports pandas for the same step, which each step cost when every step was a new process
  (target <= 0.05 s a step).
- `llm_latency`: an `llm` agent (ReAct: one `python` call that hands in an answer, then `submit`)
  through the whole harness (`flows.evaluate`, the loop on the harness's event loop, the proxy, the
  query's kernel) against a
  scripted model server that answers every call after `latency_s`, with `concurrency` queries in
  flight. The flow run's time over the latency-bound ideal, ceil(queries / concurrency) x calls per
  query x latency (target <= 1.3 at 32 in flight, <= 1.5 at 128: `llm_latency_128`), the flow
  process's own CPU per model call (target <= 20 ms) and its peak memory (target <= 1 GB).
  `llm_marginal_cpu`: the same CPU per call less the run's fixed start-up (the slope between the
  two runs: what one more call costs the harness). `llm_latency_threads`, `llm_latency_128_threads`:
  the same runs with `evaluate.query_task_runs: false` (no Prefect task run per query).
- `dask_scaleout`: the oracle on the built benchmark's split through prefect-dask's
  DaskTaskRunner on a local cluster of 1, then 2 worker processes (1 thread each); the speedup
  t1 / t2 of the flow runs (target >= 1.7 on two cores). The oracle runs its script
  (`reuse_verify: false`): graded on the kept verify runs it would run nothing to scale out.
  Needs `processed/benchmark` (`make run`).

All write into `processed/metrics/bench_evaluation.json` beside the ingest figures. The last two
run `python -m flows.evaluate` in a temporary project against a local Prefect server of their own.
The first three are `harness`'s, the last two `scaling`'s; `__main__` is the command line.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.evaluation.harness import artifact_reading, harness_overhead, kernel_steps, scoring_throughput
from benchmarks.evaluation.scaling import dask_scaleout, llm_latency, marginal_cpu, oracle_project
from benchmarks.runs import prefect_env

ORACLE_RUNNING = {"kind": "oracle", "options": {"reuse_verify": False}}  # runs its script in a sandbox
MEASUREMENTS = ("harness_overhead", "artifact_reading", "scoring_throughput", "kernel_steps", "llm_latency",
                "dask_scaleout")


def measure(names: tuple[str, ...], params: dict, benchmark: Path) -> dict:
    """Run the named measurements; the last two share one local Prefect server."""
    results: dict = {}
    if "harness_overhead" in names:
        results["harness_overhead"] = harness_overhead()
    if "artifact_reading" in names:
        results["artifact_reading"] = artifact_reading()
    if "scoring_throughput" in names:
        results["scoring_throughput"] = scoring_throughput()
    if "kernel_steps" in names:
        results["kernel_steps"] = kernel_steps()
    if {"llm_latency", "dask_scaleout"} & set(names):
        with tempfile.TemporaryDirectory(prefix="scibench-bench-flows-") as work, prefect_env(Path(work)) as env:
            if "llm_latency" in names:
                results["llm_latency"] = llm_latency(params, env, Path(work))
                results["llm_latency_128"] = llm_latency(params, env, Path(work), queries=256, concurrency=128,
                                                         target_ratio=1.5)
                results["llm_marginal_cpu"] = marginal_cpu(results["llm_latency"], results["llm_latency_128"])
                results["llm_latency_threads"] = llm_latency(params, env, Path(work), task_runs=False)
                results["llm_latency_128_threads"] = llm_latency(params, env, Path(work), queries=256, concurrency=128,
                                                                 target_ratio=1.5, task_runs=False)
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
    if "kernel_steps" in results:
        kernel = results["kernel_steps"]
        lines.append(f"kernel: start {kernel['start_median_s']} s, a step {kernel['step_median_s']} s median "
                     f"(target <= {kernel['target_step_s']}) vs a fresh python importing pandas "
                     f"{kernel['fresh_python_pandas_median_s']} s")
    if "artifact_reading" in results:
        reading = results["artifact_reading"]
        lines.append(f"artifact reading ({reading['rows']} rows): {reading['in_process_s']} s in process, "
                     f"{reading['child_s']} s in the child, overhead {reading['overhead_s']} s median "
                     f"(target <= {reading['target_overhead_s']})")
    if "scoring_throughput" in results:
        scoring = results["scoring_throughput"]
        lines.append(f"scoring: {scoring['per_second']} results/s (target >= {scoring['target_per_second']})")
    for key in ("llm_latency", "llm_latency_128", "llm_latency_threads", "llm_latency_128_threads"):
        if key in results:
            llm = results[key]
            how = "a task run each" if llm.get("task_runs", True) else "on the flow's threads"
            lines.append(f"llm evaluation ({how}): {llm['queries']} queries, {llm['concurrency']} in flight, "
                         f"{llm['calls_per_query']} calls of {llm['latency_s']} s each: flow {llm['flow_s']} s "
                         f"(process {llm['process_s']} s) vs ideal {llm['ideal_s']} s, ratio {llm['ratio']} "
                         f"(target <= {llm['target_ratio']}); {llm['in_flight']} in flight on average, "
                         f"harness CPU {llm['harness_cpu_per_call_ms']} ms a call (target <= 20), peak "
                         f"{llm['peak_rss_mb']} MB (target <= 1024), machine cores busy {llm['busy_cores']}")
    if "llm_marginal_cpu" in results:
        marginal = results["llm_marginal_cpu"]
        lines.append(f"llm harness CPU per call beyond start-up: {marginal['per_call_ms']} ms "
                     f"(target <= {marginal['target_cpu_per_call_ms']}); start-up {marginal['fixed_s']} s")
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
