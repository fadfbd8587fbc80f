"""The training reward of a hand-in to a train or val query: what an optimiser climbs, and nothing more.

ST-Bench's reward per metric, s = 0.10 sanity + 0.40 target + 0.50 reference (one definition:
`stages.scoring.query.checks.metric_reward`), averaged over the query's metrics, on the metric
values the harness recomputes from the hand-in's artifact against the hidden truth, never on the
values the hand-in reports: a workflow cannot raise its reward by writing numbers. The reference is
the cached one-turn single-agent value of the same model on that query (a baseline file,
{query_id: {metric: value}}); without one, the weights are 0.40 sanity / 0.60 target. A hypothesis
query's reward is its exact match with the typed gold.

Where this departs from the paper: ST-Bench computes the reward on the metrics the system reports;
here they are recomputed, so a search cannot learn to invent them. The test split is held out:
asking for a test query's reward is an error, so no optimiser can climb the split it is judged on.

    python -m stages.optimize.reward <query_id> <workspace> [--baseline <file.json>]

prints the reward of what `<workspace>/work/` holds (answer.json and the artifact).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from stages.evaluation.journal import JournalRecord
from stages.evaluation.runner import answer_of
from stages.layout import BENCHMARK
from stages.sandbox import harvest_work
from stages.sandbox.workspace import ANSWER_FILE, MAX_ARTIFACT_BYTES
from stages.scoring.query.hand_ins import BuiltTask, execution_of, load_private, recompute_hand_in
from stages.scoring.query.outcomes import Execution, Outcome, classify
from stages.scoring.query.scorer import score_query

Baseline = dict[str, dict[str, float | None]]  # query id -> metric -> the one-turn baseline's value


class HeldOut(ValueError):
    """A reward asked for on a query of the test split."""


def pool_query(benchmark: Path, query_id: str) -> pd.Series:
    """The query's row of queries.parquet; a test query is refused."""
    queries = pd.read_parquet(benchmark / "queries.parquet", columns=["query_id", "task_id", "split", "prompt"])
    found = queries[queries["query_id"] == query_id]
    if found.empty:
        raise KeyError(f"{benchmark / 'queries.parquet'}: no query {query_id!r}")
    row = found.iloc[0]
    if row["split"] == "test":
        raise HeldOut(f"query {query_id} is on the test split: its reward is never computed (held out)")
    return row


def reference_gold(task: BuiltTask, query_id: str, baseline: Baseline | None) -> dict:
    """What the reward compares with: the baseline's metric values, or a hypothesis's gold."""
    if task.spec.answer.metrics:
        values = (baseline or {}).get(query_id, {})
        return {"metrics": {metric.name: values.get(metric.name) for metric in task.spec.answer.metrics}}
    return task.records[query_id]["gold"]


def reward_of(task: BuiltTask, query_id: str, execution: Execution, baseline: Baseline | None) -> float:
    """The reward of one execution (its metrics already recomputed)."""
    return score_query(task.spec.answer, execution, reference_gold(task, query_id, baseline),
                       task.grading(query_id)).reward


def record_reward(benchmark: Path, query_id: str, record: JournalRecord, artifacts: Path,
                  baseline: Baseline | None = None) -> tuple[float, float]:
    """The reward of a journaled run (its artifact under `artifacts`), and the reward it reports.

    The first is the reward: on the metrics recomputed from the artifact. The second scores the
    numbers the hand-in wrote as if they were true: never climbed, kept for the audit of whether a
    search ever preferred a candidate that reports more than it earns (docs/optimization.md).
    """
    task, execution = _journaled(benchmark, query_id, record, artifacts)
    reported = Execution(record.exit_code, record.timed_out, record.infra_error, record.answer_text,
                         record.answer_problem)
    return reward_of(task, query_id, execution, baseline), reward_of(task, query_id, reported, baseline)


def recomputed_metrics(benchmark: Path, query_id: str, record: JournalRecord,
                       artifacts: Path) -> dict[str, float | None]:
    """The metric values the harness recomputes from a journaled run's artifact.

    None for a metric undefined on the artifact, or every metric of a run that was not answered:
    what the one-turn baseline leaves as the reference of later rewards.
    """
    task, execution = _journaled(benchmark, query_id, record, artifacts)
    outcome, parsed = classify(task.spec.answer, execution)
    values = parsed["metrics"] if outcome is Outcome.ANSWERED and parsed is not None else {}
    return {metric.name: values.get(metric.name) for metric in task.spec.answer.metrics or []}


def workspace_reward(query_id: str, workspace: Path, benchmark: Path = BENCHMARK,
                     baseline: Baseline | None = None) -> float:
    """The reward of what `workspace/work/` holds now, read as the harness reads a hand-in."""
    row = pool_query(benchmark, query_id)
    task = load_private(benchmark, row["task_id"])
    artifact = task.spec.artifact.file if task.spec.artifact is not None else None
    files = harvest_work(str(workspace / "work"), [ANSWER_FILE, *([artifact] if artifact else [])],
                         MAX_ARTIFACT_BYTES)
    answer, problem = answer_of(files.get(ANSWER_FILE))
    execution = Execution(0, False, None, answer, problem)
    if artifact is not None:
        taken = files[artifact]
        execution = recompute_hand_in(task, query_id, execution, taken.data, None if taken.missing else taken.problem,
                                      _entity_key(row["prompt"])).execution
    return reward_of(task, query_id, execution, baseline)


def _journaled(benchmark: Path, query_id: str, record: JournalRecord, artifacts: Path) -> tuple[BuiltTask, Execution]:
    """A pool query's task and the execution the harness scores for a journaled run of it."""
    row = pool_query(benchmark, query_id)
    task = load_private(benchmark, row["task_id"])
    return task, execution_of(task, query_id, record, _entity_key(row["prompt"]), artifacts)[0]


def _entity_key(prompt: str) -> str:
    from stages.catalog_scopes import read_prompt_block

    return read_prompt_block(prompt, "Scope")["entity_key"]


def main() -> None:
    """The command: print the reward of a workspace's hand-in."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("query_id")
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--baseline", type=Path, help="the one-turn baseline's values, {query_id: {metric: value}}")
    parser.add_argument("--benchmark", type=Path, default=BENCHMARK)
    args = parser.parse_args()
    baseline = json.loads(args.baseline.read_text()) if args.baseline else None
    print(f"{workspace_reward(args.query_id, args.workspace, args.benchmark, baseline):.6f}")


if __name__ == "__main__":
    main()
