"""DVC entry point `score@<agent>`: journal -> per-query scores -> processed/metrics/<agent>.json.

`<agent>.json` holds the system-level numbers `dvc metrics show/diff` compare (score 0-100, outcome
counts, coverage-quality rates, reward, benchmark version); `<agent>.tasks.json` the per-task scores.

Scoring is separate from evaluation, so changing a metric never re-runs an agent. Every query of the
split must have a journal record for the agent's current configuration; a gap is an error, not a 0.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import pandas as pd
import yaml

from stages.catalog import TaskSpec
from stages.evaluate import benchmark_id, load_split, setup_agent
from stages.hashing import write_json
from stages.journal import Journal, JournalRecord, record_key
from stages.layout import BENCHMARK, METRICS, RUNS, journal_path, task_dir
from stages.params import load_params
from stages.scoring.aggregate import summarize
from stages.scoring.outcomes import Execution
from stages.scoring.query import QueryScore, score_query
from stages.version import benchmark_version


def load_private(benchmark: Path, task_id: str) -> tuple[TaskSpec, dict]:
    """A built task's spec and its per-query gold answers."""
    private = task_dir(benchmark, task_id) / "private"
    spec = TaskSpec.model_validate(yaml.safe_load((private / "task.yaml").read_text()))
    records = json.loads((private / "queries.json").read_text())
    return spec, {query_id: entry["gold"] for query_id, entry in records.items()}


def score_split(
    queries: pd.DataFrame, records: dict[str, JournalRecord], keys: dict[str, str], benchmark: Path
) -> dict[str, list[QueryScore]]:
    """Score every query of the split from its journal record, grouped by task."""
    missing = sorted(q for q, k in keys.items() if k not in records)
    if missing:
        raise LookupError(f"{len(missing)} queries have no journal record (first: {missing[0]}); "
                          "run the evaluate stage first")
    per_task: dict[str, list[QueryScore]] = defaultdict(list)
    for task_id, group in queries.groupby("task_id", sort=True):
        spec, gold = load_private(benchmark, task_id)
        for query_id in sorted(group["query_id"]):
            record = records[keys[query_id]]
            execution = Execution(record.exit_code, record.timed_out, record.infra_error,
                                  record.answer_text, record.answer_problem)
            per_task[task_id].append(score_query(spec.answer, execution, gold[query_id]))
    return dict(per_task)


def main() -> None:
    """Score one agent's journal on the evaluated split."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("agent")
    args = parser.parse_args()
    params = load_params()
    agent = setup_agent(args.agent, params.agents[args.agent])
    split = params.evaluate.split
    queries = load_split(BENCHMARK, split)
    keys = {row.query_id: record_key(row.task_hash, row.query_id, agent.agent_hash, agent.model)
            for row in queries.itertuples()}
    journal = Journal(journal_path(RUNS, args.agent))
    records = journal.latest()
    summary = summarize(score_split(queries, records, keys, BENCHMARK))
    version = benchmark_version(Path.cwd(), benchmark_id(BENCHMARK))
    packages = version.pop("packages")
    tasks = summary.pop("tasks")
    metrics = {**summary, "agent": args.agent, "split": split, "version": version,
               "journal_skipped_lines": len(journal.problems)}
    write_json(METRICS / f"{args.agent}.json", metrics)
    write_json(METRICS / f"{args.agent}.tasks.json",
               {"agent": args.agent, "split": split, "version": version, "packages": packages,
                "tasks": tasks})
    print(f"score@{args.agent}: {metrics['score']:.2f}/100 on {metrics['n_queries']} {split} "
          f"queries; outcomes {metrics['outcomes']}")


if __name__ == "__main__":
    main()
