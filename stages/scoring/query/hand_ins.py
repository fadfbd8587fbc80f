"""Every hand-in of a split scored from the agent's journal records (what `score@<agent>` runs).

A query is scored from its journal record and its built task's private folder: the answer and
the run's outcome from the record; for a graded task, the metrics recomputed from the artifact the
record names (kept under its sha256 in the agent's artifact store) against the query's hidden
truth (`recompute`), which also gives the honesty verdict; the gold and the reference models'
values the build recorded (`references`); and, for a failed run of a checkpointed task, the
error class its checkpoints show (`attribution`). A query without a record is an error, not a 0.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stages.built_benchmark import built_task
from stages.catalog import TaskSpec
from stages.catalog_scopes import read_prompt_block
from stages.evaluation.journal import JournalRecord
from stages.layout import task_dir
from stages.scoring.query.attribution import attribute
from stages.scoring.query.outcomes import Execution
from stages.scoring.query.recompute import Recomputed, recompute
from stages.scoring.query.references import read_references
from stages.scoring.query.scorer import Grading, QueryScore, score_query

SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class BuiltTask:
    """A built task's spec, entity key and per-query private records."""

    spec: TaskSpec
    folder: Path
    records: dict[str, dict]

    def grading(self, query_id: str) -> Grading:
        """The query's reference values and bootstrap tolerance."""
        references = read_references(self.folder / "private" / query_id)
        return Grading(references, self.records[query_id].get("tolerance"))


def load_private(benchmark: Path, task_id: str) -> BuiltTask:
    """A built task's spec and its per-query private records (gold, tolerance, ...)."""
    folder = task_dir(benchmark, task_id)
    spec = built_task(benchmark, task_id)
    records = json.loads((folder / "private" / "queries.json").read_text())
    return BuiltTask(spec, folder, records)


def execution_of(task: BuiltTask, query_id: str, record: JournalRecord, key: str,
                 artifacts: Path) -> tuple[Execution, str | None]:
    """The execution to score and, for a graded task, the honesty verdict."""
    execution = Execution(record.exit_code, record.timed_out, record.infra_error,
                          record.answer_text, record.answer_problem)
    if task.spec.artifact is None:
        return execution, None
    data, problem = None, record.artifact_problem
    if record.artifact_sha256 is not None:
        if not SHA256.fullmatch(record.artifact_sha256):
            raise ValueError(f"journal record {record.key}: artifact id {record.artifact_sha256!r} "
                             "is not a sha256")
        data = (artifacts / record.artifact_sha256).read_bytes()
    result = recompute_hand_in(task, query_id, execution, data, problem, key)
    return result.execution, result.honesty


def recompute_hand_in(task: BuiltTask, query_id: str, execution: Execution, artifact: bytes | None,
                      problem: str | None, key: str) -> Recomputed:
    """`recompute` of a graded task's artifact against the query's hidden truth."""
    private = task.folder / "private" / query_id
    return recompute(task.spec, execution, artifact, problem, pd.read_parquet(private / "truth.parquet"),
                     pd.read_parquet(private / "required.parquet"), key)


def attribute_query(task: BuiltTask, query_id: str, record: JournalRecord, score: QueryScore,
                    artifacts: Path) -> str | None:
    """The failed query's error class from the agent's checkpoints (`attribution`)."""
    if not task.spec.checkpoints:
        return None
    written = {}
    for name, sha in record.checkpoints.items():
        if not SHA256.fullmatch(sha):
            raise ValueError(f"journal record {record.key}: checkpoint id {sha!r} is not a sha256")
        written[name] = (artifacts / sha).read_bytes()
    return attribute(task.spec, score.pass_rate >= 1.0, written,
                     task.records[query_id].get("checkpoints") or {})


def score_split(
    queries: pd.DataFrame, records: dict[str, JournalRecord], keys: dict[str, str], benchmark: Path,
    artifacts: Path,
) -> tuple[dict[str, list[tuple[str, QueryScore]]], dict[str, Counter], dict[str, str | None]]:
    """Score every query of the split from its journal record, grouped by task.

    Returns (query id, score) pairs per task, in query id order, the honesty verdicts per task
    (graded tasks only) and each query's checkpoint attribution (None: passed or no checkpoints).
    """
    missing = sorted(q for q, k in keys.items() if k not in records)
    if missing:
        raise LookupError(f"{len(missing)} queries have no journal record (first: {missing[0]}); "
                          "run the evaluate stage first")
    per_task: dict[str, list[tuple[str, QueryScore]]] = defaultdict(list)
    honesty: dict[str, Counter] = {}
    attributions: dict[str, str | None] = {}
    for task_id, group in queries.groupby("task_id", sort=True):
        task = load_private(benchmark, task_id)
        prompts = dict(zip(group["query_id"], group["prompt"], strict=True))
        for query_id in sorted(group["query_id"]):
            entity_key = read_prompt_block(prompts[query_id], "Scope")["entity_key"]
            execution, verdict = execution_of(task, query_id, records[keys[query_id]],
                                              entity_key, artifacts)
            if task.spec.artifact is not None:
                honesty.setdefault(task_id, Counter())[str(verdict)] += 1
            score = score_query(task.spec.answer, execution, task.records[query_id]["gold"],
                                task.grading(query_id))
            per_task[task_id].append((query_id, score))
            attributions[query_id] = attribute_query(task, query_id, records[keys[query_id]], score,
                                                     artifacts)
    return dict(per_task), honesty, attributions
