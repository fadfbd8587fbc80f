"""Write the built benchmark's shared files (queries, splits, verification report, benchmark id); read some back."""

from __future__ import annotations

import dataclasses
import shutil
from collections import defaultdict
from datetime import date
from pathlib import Path

import pandas as pd

from stages.catalog import TaskSpec
from stages.construction.drawing import Discard, Query, pool_query, queries_frame, write_private_queries
from stages.construction.splits import stratified_split
from stages.hashing import content_hash, file_sha256, write_json
from stages.layout import task_dir
from stages.params import SplitParams
from stages.repository import write_parquet
from stages.yamlfile import read_yaml

UNLABELLED_STAGES = ("align", "screen")  # a drawn query discarded here cost no annotator run


def verification_report(
    drawn: dict[str, int], verified: dict[str, list[Query]], discards: list[Discard],
    overlaps: dict[str, dict] | None = None,
) -> dict:
    """Account for every scope and query: how many were drawn, labelled, verified, and why others were not.

    Drawn: tried by the rounds (staged, or discarded at align); labelled: the drawn ones an
    annotator ran on (not discarded at align or screen).
    """
    by_task: dict[str, list[dict]] = defaultdict(list)
    for discard in sorted(discards, key=lambda d: (d.task_id, d.stage, d.scope)):
        by_task[discard.task_id].append(dataclasses.asdict(discard))
    before_label = defaultdict(int)  # queries drawn that never reached the annotator
    for discard in discards:
        before_label[discard.task_id] += discard.stage in UNLABELLED_STAGES
    tasks = {
        task_id: {
            "queries_drawn": drawn[task_id],
            "queries_labelled": drawn[task_id] - before_label[task_id],
            "queries_verified": len(verified.get(task_id, [])),
            "discarded": by_task.get(task_id, []),
            "split_overlap": (overlaps or {}).get(task_id),
        }
        for task_id in sorted(drawn)
    }
    return {
        "tasks": tasks,
        "tasks_kept": sorted(t for t, qs in verified.items() if qs),
        "queries_drawn": sum(drawn.values()),
        "queries_labelled": sum(entry["queries_labelled"] for entry in tasks.values()),
        "queries_verified": sum(len(qs) for qs in verified.values()),
        "discarded": len(discards),
    }


def write_benchmark(
    out_dir: Path,
    queries: list[Query],
    splits: dict[str, str],
    report: dict,
    data: dict | None = None,
) -> str:
    """Write queries.parquet, splits.json, verification.json and benchmark.json; return the id.

    `data` says, per domain, where each source came from (synthetic: generator, params, seed;
    real: raw path and content hash) and whether real and synthetic sources are mixed.
    """
    frame = queries_frame(queries, splits)
    write_parquet(frame, out_dir / "queries.parquet")
    split_ids = {name: sorted(q for q, s in splits.items() if s == name)
                 for name in ("train", "val", "test")}
    write_json(out_dir / "splits.json", split_ids)
    write_json(out_dir / "verification.json", report)
    public_files = sorted(
        [str(p.relative_to(out_dir)), file_sha256(p)]
        for p in (out_dir / "tasks").glob("*/public/*/**/*") if p.is_file()
    )
    bench_id = "b-" + content_hash([sorted(splits.items()), sorted({q.task_hash for q in queries}),
                                    public_files, data or {}])
    counts = {name: len(ids) for name, ids in split_ids.items()}
    write_json(out_dir / "benchmark.json", {
        "benchmark_id": bench_id,
        "tasks": sorted({q.task_id for q in queries}),
        "queries": len(queries),
        "splits": counts,
        "data": data or {},
    })
    return bench_id


def _overlap_entry(overlap) -> dict:
    entry = dataclasses.asdict(overlap)
    entry["queries"] = {q["query_id"]: {k: round(v, 6) for k, v in q.items() if k != "query_id"}
                        for q in entry["queries"]}
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in entry.items()}


def remove_unkept(out_dir: Path, task_id: str, kept: set[str]) -> None:
    """Delete the staged public and private folders of a task's queries that were not kept."""
    folder = task_dir(out_dir, task_id)
    for side in ("public", "private"):
        for path in sorted((folder / side).glob("q-*")):
            if path.name not in kept:
                shutil.rmtree(path)


def finalize_benchmark(
    out_dir: Path,
    drawn: dict[str, int],
    verified: dict[str, list[Query]],
    labels: dict,
    discards: list[Discard],
    split: SplitParams,
    data: dict | None = None,
) -> tuple[str, dict]:
    """Split each task's verified queries, write gold and the shared files; return (id, report).

    Splits are stratified by scope kind with test entity-days kept out of train where the pool
    allows (`stages.construction.splits`); the overlap left is reported per task. A task left with fewer
    verified queries than its test split needs is dropped, with the reason.
    """
    verified, discards, splits, overlaps = dict(verified), list(discards), {}, {}
    for task_id, task_queries in sorted(verified.items()):
        try:
            result = stratified_split([pool_query(q) for q in task_queries], split.train,
                                      split.val, split.min_test)
        except ValueError as error:
            discards.append(Discard(task_id, "*", "split", f"task dropped: {error}"))
            verified[task_id] = []
            continue
        splits.update(result.splits)
        overlaps[task_id] = _overlap_entry(result.overlap)
    for task_id, task_queries in verified.items():
        remove_unkept(out_dir, task_id, {q.query_id for q in task_queries})
        if task_queries:
            write_private_queries(task_dir(out_dir, task_id) / "private", task_queries, labels)
    report = verification_report(drawn, verified, discards, overlaps)
    kept = [q for task_queries in verified.values() for q in task_queries]
    return write_benchmark(out_dir, kept, splits, report, data), report


def verification_markdown(report: dict) -> str:
    """A Markdown table of the verification report (a Prefect artifact)."""
    lines = ["| task | drawn | labelled | verified | discarded |", "|---|---|---|---|---|"]
    for task_id, entry in report["tasks"].items():
        lines.append(f"| {task_id} | {entry['queries_drawn']} | {entry['queries_labelled']} | "
                     f"{entry['queries_verified']} | {len(entry['discarded'])} |")
    return "\n".join(lines)


def sample_queries(benchmark: Path, per_task: int) -> list[Query]:
    """The first `per_task` queries of every task of a built benchmark, by query id."""
    frame = pd.read_parquet(benchmark / "queries.parquet").sort_values(["task_id", "query_id"])
    rows = frame.groupby("task_id").head(per_task)
    return [Query(r.query_id, r.task_id, r.task_hash, r.scope, r.scope_kind, "", int(r.n_entities),
                  date.fromisoformat(str(r.start)[:10]), date.fromisoformat(str(r.end)[:10]), r.prompt)
            for r in rows.itertuples()]


def read_spec(benchmark: Path, task_id: str) -> TaskSpec:
    """A built task's spec (its `private/task.yaml`)."""
    return TaskSpec.model_validate(read_yaml(task_dir(benchmark, task_id) / "private" / "task.yaml"))
