"""DVC entry point `score@<agent>`: journal -> per-query scores -> processed/metrics/<agent>.json.

`<agent>.json` holds the system-level numbers `dvc metrics show/diff` compare (score 0-100 with its
interval, outcome counts, coverage-quality rates, reward, cuts, usage) and the version block (benchmark
id, git describe, build dvc.lock hash, package versions, the model configured and the model ids the
endpoint reported); `<agent>.tasks.json` the per-task scores.

Scoring is separate from evaluation, so changing a metric never re-runs an agent. Every query of the
split must have a journal record for the agent's current configuration; a gap is an error, not a 0.
For a graded task, the metrics scored are recomputed from the artifact the record names against
the query's hidden truth (`stages.scoring.query.recompute`); what the agent reported only feeds the
honesty rate (share of graded queries whose reported metrics agree with the recomputed ones).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stages.catalog import TaskSpec
from stages.construction.scopes import parse_scope_block
from stages.evaluation.harness import benchmark_id, built_task, load_split, setup_agent
from stages.evaluation.journal import Journal, JournalRecord, record_key
from stages.hashing import write_json
from stages.layout import BENCHMARK, JUDGEMENTS, METRICS, RUNS, SCORES, journal_path, task_dir
from stages.params import load_params
from stages.scoring.aggregate.suite import query_frame, suite
from stages.scoring.aggregate.summary import summarize, task_scores
from stages.scoring.query.attribution import attribute
from stages.scoring.query.outcomes import Execution
from stages.scoring.query.reasonableness import JudgeIdentity, load_verdicts, summarize_verdicts
from stages.scoring.query.recompute import recompute
from stages.scoring.query.references import read_references
from stages.scoring.query.scorer import Grading, QueryScore, score_query
from stages.version import benchmark_version

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
    private = task.folder / "private" / query_id
    result = recompute(task.spec, execution, data, problem,
                       pd.read_parquet(private / "truth.parquet"),
                       pd.read_parquet(private / "required.parquet"), key)
    return result.execution, result.honesty


def checkpoint_attribution(task: BuiltTask, query_id: str, record: JournalRecord, score: QueryScore,
                           artifacts: Path) -> str | None:
    """The failed query's error class from the agent's checkpoints (`stages.scoring.query.attribution`)."""
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
            entity_key = parse_scope_block(prompts[query_id])["entity_key"]
            execution, verdict = execution_of(task, query_id, records[keys[query_id]],
                                              entity_key, artifacts)
            if task.spec.artifact is not None:
                honesty.setdefault(task_id, Counter())[str(verdict)] += 1
            score = score_query(task.spec.answer, execution, task.records[query_id]["gold"],
                                task.grading(query_id))
            per_task[task_id].append((query_id, score))
            attributions[query_id] = checkpoint_attribution(task, query_id, records[keys[query_id]],
                                                            score, artifacts)
    return dict(per_task), honesty, attributions


def honesty_summary(honesty: dict[str, Counter]) -> dict:
    """Verdict counts and the honesty rate.

    The rate is the share of gradable artifacts whose reported metrics agree with the recomputed
    ones; an unreported metric counts as not agreeing.
    """
    total = sum(honesty.values(), Counter())
    graded = total["agrees"] + total["disagrees"] + total["unreported"]
    return {"agrees": total["agrees"], "disagrees": total["disagrees"],
            "unreported": total["unreported"], "no_artifact": total["None"],
            "rate": round(total["agrees"] / graded, 6) if graded else None}


def judged_stages(settings, records: Mapping[str, JournalRecord], attributions: Mapping[str, str | None],
                  path: Path) -> dict[str, str]:
    """The judge's step (alignment, modeling, reasoning) for each run its checkpoints left unattributed."""
    judge = JudgeIdentity.of(settings)
    verdicts = load_verdicts(path)
    stages = {}
    for query_id, attribution in attributions.items():
        if attribution != "unattributed":
            continue
        verdict = verdicts.get(judge.verdict_key(records[query_id]))
        if verdict is not None and verdict.stage is not None:
            stages[query_id] = verdict.stage
    return stages


def judged(settings, records: list[JournalRecord], path: Path) -> dict:
    """MR of the split's hand-ins under the configured judge (verdicts of other judges are ignored)."""
    judge = JudgeIdentity.of(settings)
    verdicts = load_verdicts(path)
    found = [verdicts[key] for key in (judge.verdict_key(r) for r in records if r.answer_text is not None)
             if key in verdicts]
    return summarize_verdicts(found, settings.model)


def write_query_scores(frame: pd.DataFrame, path: Path) -> None:
    """Keep the per-query scores (the input of `compare`'s paired intervals), byte-deterministic."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path, index=False, compression="zstd")


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
    scored, honesty, attributions = score_split(queries, records, keys, BENCHMARK,
                                                RUNS / args.agent / "artifacts")
    summary = summarize({task_id: [score for _, score in pairs] for task_id, pairs in scored.items()})
    by_query = {query_id: records[key] for query_id, key in keys.items()}
    verdicts = JUDGEMENTS / f"{args.agent}.jsonl"
    stages = judged_stages(params.judge, by_query, attributions, verdicts) if params.judge.model else {}
    frame = query_frame(scored, by_query, attributions, stages)
    specs = {task_id: built_task(BENCHMARK, task_id) for task_id in scored}
    settings = params.scoring
    summary.update(suite(frame, task_scores(summary), specs, settings.resamples, settings.level,
                         settings.seed))
    write_query_scores(frame, SCORES / f"{args.agent}.parquet")
    if params.judge.model is not None:
        summary["modeling_reasonableness"] = judged(params.judge, list(by_query.values()), verdicts)
    summary["honesty"] = honesty_summary(honesty)
    for task_id, counts in honesty.items():
        summary["tasks"][task_id]["honesty"] = honesty_summary({task_id: counts})
    version = benchmark_version(Path.cwd(), benchmark_id(BENCHMARK))
    version["model"] = {"configured": agent.model, "reported": summary["usage"]["models_reported"]}
    packages = version["packages"]
    tasks = summary.pop("tasks")
    metrics = {**summary, "agent": args.agent, "split": split, "version": version,
               "journal_skipped_lines": len(journal.problems)}
    write_json(METRICS / f"{args.agent}.json", metrics)
    write_json(METRICS / f"{args.agent}.tasks.json",
               {"agent": args.agent, "split": split, "version": version, "packages": packages,
                "tasks": tasks})
    ci = metrics["score_ci"]
    interval = f" [{ci['low']:.1f}, {ci['high']:.1f}]" if ci else ""
    print(f"score@{args.agent}: {metrics['score']:.2f}/100{interval} on {metrics['n_queries']} {split} "
          f"queries; outcomes {metrics['outcomes']}")


if __name__ == "__main__":
    main()
