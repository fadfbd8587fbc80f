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
from collections import Counter
from pathlib import Path

import pandas as pd

from stages.built_benchmark import benchmark_id, built_task, load_split
from stages.evaluation.agents.identity import AgentSetup, agent_epochs, query_keys, setup_agent
from stages.evaluation.journal import Journal, JournalRecord
from stages.hashing import write_json
from stages.layout import BENCHMARK, JUDGEMENTS, METRICS, RUNS, SCORES, journal_path
from stages.params import JudgeParams, load_params
from stages.scoring.aggregate.epochs import pass_at_k, summarize_epochs
from stages.scoring.aggregate.suite import honesty_summary, modeling_reasonableness, query_frame, suite
from stages.scoring.aggregate.summary import task_scores
from stages.scoring.query.hand_ins import score_split
from stages.scoring.query.reasonableness import judged_stages
from stages.skipped import skipped_reason
from stages.version import benchmark_version


def write_query_scores(frame: pd.DataFrame, path: Path) -> None:
    """Keep the per-query scores (the input of `compare`'s paired intervals), byte-deterministic."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path, index=False, compression="zstd")


def score_epochs(queries: pd.DataFrame, agent: AgentSetup, epochs: int, records: dict[str, JournalRecord],
                 judge: JudgeParams, verdicts: Path) -> tuple[list[dict], pd.DataFrame, dict[str, Counter], list]:
    """Score every epoch's runs.

    Returns per epoch task id -> scores, the per-run frame (with an `epoch` column), the honesty
    verdicts per task over every run, and the runs' records.
    """
    per_epoch, frames, honesty, runs = [], [], {}, []
    for epoch in range(epochs):
        keys = query_keys(queries, agent, epoch)
        scored, honest, attributions = score_split(queries, records, keys, BENCHMARK, RUNS / agent.name / "artifacts")
        per_epoch.append({task_id: [score for _, score in pairs] for task_id, pairs in scored.items()})
        by_query = {query_id: records[key] for query_id, key in keys.items()}
        stages = judged_stages(judge, by_query, attributions, verdicts) if judge.model else {}
        frames.append(query_frame(scored, by_query, attributions, stages).assign(epoch=epoch))
        runs += by_query.values()
        for task_id, counts in honest.items():
            honesty[task_id] = honesty.get(task_id, Counter()) + counts
    return per_epoch, pd.concat(frames, ignore_index=True), honesty, runs


def write_skipped_scores(agent: str, split: str, reason: str) -> None:
    """The outputs of score@<agent> for an agent whose evaluation skipped: the reason, no scores."""
    write_json(METRICS / f"{agent}.json", {"agent": agent, "split": split, "skipped": reason})
    write_json(METRICS / f"{agent}.tasks.json", {"agent": agent, "split": split, "skipped": reason, "tasks": {}})
    SCORES.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"query_id": pd.Series(dtype=str)}).to_parquet(SCORES / f"{agent}.parquet", index=False)
    print(f"score@{agent}: skipped: {reason}")


def main() -> None:
    """Score one agent's journal on the evaluated split."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("agent")
    args = parser.parse_args()
    params = load_params()
    split = params.evaluate.split
    if (reason := skipped_reason(RUNS / args.agent)) is not None:
        write_skipped_scores(args.agent, split, reason)
        return
    agent = setup_agent(args.agent, params.agents[args.agent])
    queries = load_split(BENCHMARK, split)
    journal = Journal(journal_path(RUNS, args.agent))
    records = journal.latest()
    verdicts = JUDGEMENTS / f"{args.agent}.jsonl"
    epochs = agent_epochs(params.agents[args.agent], params.evaluate)
    # the systems of ST-Bench's protocol are not judged (no judge@ stage runs for them)
    judge = params.judge.model_copy(update={"model": None}) if args.agent in params.optimize.runs else params.judge
    per_epoch, frame, honesty, judged = score_epochs(queries, agent, epochs, records, judge, verdicts)
    summary = summarize_epochs(per_epoch)
    specs = {task_id: built_task(BENCHMARK, task_id) for task_id in per_epoch[0]}
    settings = params.scoring
    summary.update(suite(frame, task_scores(summary), specs, settings.resamples, settings.level,
                         settings.seed))
    hypothesis = {task_id for task_id, spec in specs.items() if spec.answer.hypothesis is not None}
    for task_id, by_k in pass_at_k(frame, hypothesis).items():
        summary["tasks"][task_id]["pass_at_k"] = by_k
    write_query_scores(frame, SCORES / f"{args.agent}.parquet")
    if judge.model is not None:
        summary["modeling_reasonableness"] = modeling_reasonableness(judge, judged,
                                                                      verdicts)
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
    ci, epochs = metrics["score_ci"], metrics["epochs"]
    interval = f" [{ci['low']:.1f}, {ci['high']:.1f}]" if ci else ""
    if epochs["n"] > 1:
        interval += f", mean of {epochs['n']} epochs (SE {epochs['se']})"
    print(f"score@{args.agent}: {metrics['score']:.2f}/100{interval} on {metrics['n_queries']} {split} "
          f"queries; outcomes {metrics['outcomes']}")


if __name__ == "__main__":
    main()
