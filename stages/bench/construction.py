"""`make bench`, construction part: the cost of labelling and verifying, with and without the harness.

On the built benchmark (`processed/benchmark`, any profile), a sample of queries spread over every
task (the first `per_task` of each, by query id) is annotated twice:
- `harness`: the construct flow's path, `annotate.run_annotator` (fresh workspace, sandbox, limits,
  answer and artifact collected), `construct.concurrency` runs at a time, as the flow runs them;
- `bare`: the same `reproduce.py` run back to back with the project's Python in a plain copy of the
  query's workspace, no sandbox, no harness.
The throughput ratio bare / harness (annotator runs per minute) is the harness's cost on the flow
(target <= 1.5). Seconds per annotator run per task give the build time of a profile: every query
is labelled and verified (two runs), `concurrency` at a time; `full_build_hours` extrapolates the
per-task means to the full profile's query counts. The per-run seconds are measured on the data of
the profile that was built: at `default` they understate the full data's size (say so when quoting).

`dask_scaleout`: the construction of params.yaml's profile (`--task` to build only some tasks) from
the aligned repositories (`processed/repositories`), through prefect-dask's DaskTaskRunner on a
local cluster of 1, then 2 worker processes (1 thread each), every annotator run (no resume store);
the speedup t1 / t2 of the flow runs, as the Prefect server timed them (target >= 1.7 on two
cores). The flow process aligns beside the workers in both runs, as it does on any runner.

Writes `processed/metrics/bench_construction.json` (`--only` one part keeps the other's figures).
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import pandas as pd
import yaml

from stages.bench.runs import prefect_env, run_construction
from stages.catalog import TaskSpec
from stages.construction.annotate import run_annotator
from stages.construction.drawing import Query
from stages.evaluation.runner import sandbox_limits
from stages.hashing import write_json
from stages.layout import BENCHMARK, CATALOG, METRICS, REPOSITORIES, task_dir
from stages.params import load_params

MEASUREMENTS = ("annotation", "dask_scaleout")


def sample(benchmark: Path, per_task: int) -> list[Query]:
    """The first `per_task` queries of every task, by query id."""
    frame = pd.read_parquet(benchmark / "queries.parquet").sort_values(["task_id", "query_id"])
    rows = frame.groupby("task_id").head(per_task)
    return [Query(r.query_id, r.task_id, r.task_hash, r.scope, r.scope_kind, "", int(r.n_entities),
                  date.fromisoformat(str(r.start)[:10]), date.fromisoformat(str(r.end)[:10]), r.prompt)
            for r in rows.itertuples()]


def spec_of(benchmark: Path, task_id: str) -> TaskSpec:
    """A built task's spec."""
    return TaskSpec.model_validate(yaml.safe_load((task_dir(benchmark, task_id) / "private" / "task.yaml").read_text()))


def bare_run(benchmark: Path, query: Query) -> float:
    """Seconds of one annotator run in a plain copy of the workspace (no sandbox, no harness)."""
    folder = task_dir(benchmark, query.task_id).resolve()  # the run's working directory is elsewhere
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        shutil.copytree(folder / "public" / query.query_id, workspace / "data")
        (workspace / "work").mkdir()
        (workspace / "prompt.md").write_text(query.prompt)
        annotator = folder / "private" / "annotator"
        started = time.monotonic()
        subprocess.run([sys.executable, str(annotator / "reproduce.py")], cwd=workspace, check=True,
                       env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(annotator), "OMP_NUM_THREADS": "1",
                            "HOME": tmp}, capture_output=True)
        return time.monotonic() - started


def measure(benchmark: Path, per_task: int) -> dict:
    """Throughput of the harness path and of bare runs on the same sample; seconds per task."""
    params = load_params()
    limits, hidden = sandbox_limits(params.construct.limits), [Path.cwd().resolve()]
    queries = sample(benchmark, per_task)
    specs = {q.task_id: spec_of(benchmark, q.task_id) for q in queries}

    def harness_run(query: Query) -> float:
        attempt = run_annotator(specs[query.task_id], query, task_dir(benchmark, query.task_id), limits, hidden)
        if attempt.exit_code != 0:
            raise RuntimeError(f"{query.task_id} {query.query_id}: annotator exited {attempt.exit_code}")
        return attempt.wall_seconds

    started = time.monotonic()
    with ThreadPoolExecutor(params.construct.concurrency) as pool:
        harness_seconds = list(pool.map(harness_run, queries))
    harness_wall = time.monotonic() - started
    started = time.monotonic()
    for query in queries:
        bare_run(benchmark, query)
    bare_wall = time.monotonic() - started
    per_task: dict[str, list[float]] = {}
    for query, seconds in zip(queries, harness_seconds, strict=True):
        per_task.setdefault(query.task_id, []).append(seconds)
    means = {task: round(sum(v) / len(v), 3) for task, v in sorted(per_task.items())}
    full = params.construct.queries_per_task["full"]
    return {
        "profile": params.profile,
        "queries": len(queries),
        "concurrency": params.construct.concurrency,
        "harness_runs_per_minute": round(60 * len(queries) / harness_wall, 3),
        "bare_runs_per_minute": round(60 * len(queries) / bare_wall, 3),
        "throughput_ratio_bare_over_harness": round(harness_wall / bare_wall, 3),
        "target_ratio_at_most": 1.5,
        "seconds_per_run_by_task": means,
        "build_hours_at_this_profile": round(
            sum(means[t] * 2 * n for t, n in _query_counts(benchmark).items() if t in means)
            / params.construct.concurrency / 3600, 3),
        "full_build_hours_extrapolated": round(
            sum(m * 2 * full for m in means.values()) / params.construct.concurrency / 3600, 3),
        "full_build_note": "per-run seconds measured on this profile's data; the full data are larger",
    }


def _query_counts(benchmark: Path) -> dict[str, int]:
    return pd.read_parquet(benchmark / "queries.parquet", columns=["task_id"])["task_id"].value_counts().to_dict()


def scaleout_project(work: Path, repositories: Path) -> Path:
    """A project for construction runs of its own: this checkout's catalog (copied), the repositories (linked)."""
    project = work / "construct"
    shutil.copytree(CATALOG, project / CATALOG, ignore=shutil.ignore_patterns("__pycache__"))
    (project / REPOSITORIES).parent.mkdir(parents=True)
    (project / REPOSITORIES).symlink_to(repositories.resolve())
    return project


def scaleout_params(params: dict, tasks: list[str], dask_address: str) -> dict:
    """`params` building `tasks` (all when empty) on the cluster, every annotator run (no resume store)."""
    construct = params["construct"] | {"dask_address": dask_address, "resume_dir": ""}
    return params | {"construct": construct | ({"tasks": tasks} if tasks else {})}


def dask_scaleout(project: Path, params: dict, env: dict[str, str], tasks: list[str]) -> dict:
    """The construction through a local Dask cluster of 1, then 2 worker processes: t1 / t2.

    The workers import the flow's module before the clock starts, as a long-lived cluster's have.
    """
    import distributed  # only for this measurement

    runs = []
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, host="127.0.0.1") as cluster:
            with distributed.Client(cluster) as client:
                client.run(importlib.import_module, "flows.construct")
            changed = scaleout_params(params, tasks, cluster.scheduler_address)
            (project / "params.yaml").write_text(yaml.safe_dump(changed, sort_keys=False))
            run = run_construction(project, params["profile"], env)
        built = pd.read_parquet(project / BENCHMARK / "queries.parquet", columns=["task_id"])
        runs.append({"workers": workers, "process_s": run.process_s, "flow_s": run.flow_s,
                     "busy_cores": run.busy_cores, "tasks": built["task_id"].nunique(), "queries": len(built),
                     "benchmark_id": json.loads((project / BENCHMARK / "benchmark.json").read_text())["benchmark_id"]})
    one, two = runs
    return {"profile": params["profile"], "runs": runs, "t1_s": one["flow_s"], "t2_s": two["flow_s"],
            "speedup": round(one["flow_s"] / two["flow_s"], 2),
            "process_speedup": round(one["process_s"] / two["process_s"], 2),
            "same_benchmark": one["benchmark_id"] == two["benchmark_id"], "target_speedup": 1.7}


def measure_scaleout(params: dict, repositories: Path, tasks: list[str]) -> dict:
    """`dask_scaleout` in a temporary project against a local Prefect server of its own (or why it was skipped)."""
    missing = [domain for domain in params["construct"]["domains"]
               if not (repositories / domain / "manifest.json").is_file()]
    if missing:
        return {"skipped": f"no aligned repositories {missing} in {repositories}: run `make run` first"}
    with tempfile.TemporaryDirectory(prefix="scibench-bench-construct-") as work, prefect_env(Path(work)) as env:
        return dask_scaleout(scaleout_project(Path(work), repositories), params, env, tasks)


def describe_scaleout(dask: dict) -> str:
    """The line `main` prints for the scale-out."""
    if "skipped" in dask:
        return f"dask scale-out: skipped: {dask['skipped']}"
    one, two = dask["runs"]
    return (f"dask scale-out: construction of {one['tasks']} tasks, {one['queries']} queries ({dask['profile']}): "
            f"1 worker {dask['t1_s']} s, 2 workers {dask['t2_s']} s, speedup {dask['speedup']} "
            f"(target >= {dask['target_speedup']}); same benchmark: {dask['same_benchmark']}; "
            f"machine cores busy {one['busy_cores']}, {two['busy_cores']}")


def main() -> None:
    """Measure and write the figures (`--only` keeps the other part's)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=MEASUREMENTS, action="append")
    parser.add_argument("--per-task", type=int, default=1)
    parser.add_argument("--task", action="append", default=[], help="dask_scaleout: build only this task (repeat)")
    args = parser.parse_args()
    names = tuple(args.only or MEASUREMENTS)
    out = METRICS / "bench_construction.json"
    result = json.loads(out.read_text()) if args.only and out.exists() else {}
    if "annotation" in names:
        result |= measure(BENCHMARK, args.per_task)
        print(json.dumps({k: v for k, v in result.items() if k not in ("seconds_per_run_by_task", "dask_scaleout")},
                         indent=2))
    if "dask_scaleout" in names:
        result["dask_scaleout"] = measure_scaleout(yaml.safe_load(Path("params.yaml").read_text()), REPOSITORIES,
                                                   args.task)
        print(describe_scaleout(result["dask_scaleout"]))
    write_json(out, result)


if __name__ == "__main__":
    main()
