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

Writes `processed/metrics/bench_construction.json`.
"""

from __future__ import annotations

import argparse
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

from stages.catalog import TaskSpec
from stages.construction.annotate import run_annotator
from stages.construction.drawing import Query
from stages.evaluation.runner import sandbox_limits
from stages.hashing import write_json
from stages.layout import BENCHMARK, METRICS, task_dir
from stages.params import load_params


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


def main() -> None:
    """Measure on the built benchmark and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=1)
    args = parser.parse_args()
    result = measure(BENCHMARK, args.per_task)
    write_json(METRICS / "bench_construction.json", result)
    print(json.dumps({k: v for k, v in result.items() if k != "seconds_per_run_by_task"}, indent=2))


if __name__ == "__main__":
    main()
