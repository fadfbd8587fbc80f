"""`make bench`, construction part: the cost of labelling and verifying, with and without the harness.

On the built benchmark (`processed/benchmark`, any profile), a sample of queries spread over every
task (the first `per_task` of each, by query id) is annotated twice, one run at a time:
- `harness`: the construct flow's path, `annotate.run_annotator` (its warm pool when
  `construct.warm`: a fresh workspace in the sandbox, limits, answer and artifact collected);
- `bare`: the same `reproduce.py` files run back to back in this one warm interpreter (the same
  modules preloaded) in plain copies of the workspaces, no sandbox, no fork, no harness.
The throughput ratio harness / bare (annotator runs per minute) is what the harness keeps of the
floor (target >= 0.9). The build's own time, stage by stage, is `benchmarks.build`'s.

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
import os
import runpy
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from benchmarks.runs import prefect_env, run_construction
from stages.construction.annotate import run_annotator
from stages.construction.benchmark import read_spec, sample_queries
from stages.construction.drawing import Query
from stages.hashing import write_json
from stages.layout import BENCHMARK, CATALOG, METRICS, REPOSITORIES, task_dir
from stages.params import load_params
from stages.sandbox.pools import imports_of
from stages.yamlfile import read_yaml

MEASUREMENTS = ("annotation", "dask_scaleout")


def bare_runs(benchmark: Path, queries: list[Query], preload: tuple[str, ...]) -> list[float]:
    """Seconds of each annotator run back to back in this one warm interpreter, outside any sandbox.

    The floor the harness is held to: the stack imported once (`preload`, as the warm pools do),
    each `reproduce.py` run with `runpy` in a plain copy of its query's workspace, no sandbox, no
    fork, no harness. The annotator library stays imported from one run to the next of a domain.
    """
    for name in preload:
        importlib.import_module(name)
    seconds, home = [], Path.cwd()
    for query in queries:
        folder = task_dir(benchmark, query.task_id).resolve()
        annotator = folder / "private" / "annotator"
        with tempfile.TemporaryDirectory() as tmp:
            workspace = Path(tmp)
            shutil.copytree(folder / "public" / query.query_id, workspace / "data")
            (workspace / "work").mkdir()
            (workspace / "prompt.md").write_text(query.prompt)
            sys.path.insert(0, str(annotator))
            os.chdir(workspace)
            started = time.monotonic()
            try:
                runpy.run_path(str(annotator / "reproduce.py"), run_name="__main__")
            except SystemExit as stop:
                if stop.code not in (None, 0):
                    raise RuntimeError(f"{query.task_id} {query.query_id}: annotator exited {stop.code}") from stop
            finally:
                seconds.append(time.monotonic() - started)
                os.chdir(home)
                sys.path.remove(str(annotator))
    return seconds


def measure(benchmark: Path, per_task: int) -> dict:
    """Annotator throughput through the harness (warm, one run at a time) and bare; seconds per task."""
    params = load_params()
    limits, hidden = params.construct.limits.to_limits(), [Path.cwd().resolve()]
    queries = sample_queries(benchmark, per_task)
    specs = {q.task_id: read_spec(benchmark, q.task_id) for q in queries}
    warm = imports_of([CATALOG]) if params.construct.warm else None

    def harness_run(query: Query) -> float:
        attempt = run_annotator(specs[query.task_id], query, task_dir(benchmark, query.task_id), limits, hidden,
                                warm)
        if attempt.exit_code != 0:
            raise RuntimeError(f"{query.task_id} {query.query_id}: annotator exited {attempt.exit_code}")
        return attempt.wall_seconds

    harness_run(queries[0])  # the pool's start (once per worker and build) is not a run's cost
    started = time.monotonic()
    harness_seconds = [harness_run(query) for query in queries]
    harness_wall = time.monotonic() - started
    bare_seconds = bare_runs(benchmark, queries, warm or ())
    bare_wall = sum(bare_seconds)
    per_task: dict[str, list[float]] = {}
    for query, seconds in zip(queries, harness_seconds, strict=True):
        per_task.setdefault(query.task_id, []).append(seconds)
    return {
        "profile": params.profile,
        "queries": len(queries),
        "warm": params.construct.warm,
        "harness_runs_per_minute": round(60 * len(queries) / harness_wall, 3),
        "bare_runs_per_minute": round(60 * len(queries) / bare_wall, 3),
        "throughput_ratio_harness_over_bare": round(bare_wall / harness_wall, 3),
        "target_ratio_at_least": 0.9,
        "seconds_per_run_by_task": {task: round(sum(v) / len(v), 3) for task, v in sorted(per_task.items())},
        "note": "one run at a time on both sides; the build's own per-stage times are `build_<profile>`",
    }


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
    result = json.loads(out.read_text()) if out.exists() else {}  # other parts' and builds' figures stay
    if "annotation" in names:
        result |= measure(BENCHMARK, args.per_task)
        print(json.dumps({k: v for k, v in result.items() if k not in ("seconds_per_run_by_task", "dask_scaleout")},
                         indent=2))
    if "dask_scaleout" in names:
        result["dask_scaleout"] = measure_scaleout(read_yaml(Path("params.yaml")), REPOSITORIES,
                                                   args.task)
        print(describe_scaleout(result["dask_scaleout"]))
    write_json(out, result)


if __name__ == "__main__":
    main()
