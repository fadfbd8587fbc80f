"""The scoring suite beyond the ST-Bench score: intervals, cuts, usage, infra counts, errors, honesty, MR.

Everything here starts from one table with a row per query of the split (`query_frame`): its task,
outcome, pass rate (`q`, 0 unless realistic), reward and what the run cost (wall and agent seconds,
tokens, cost, attempts). Infra errors stay in the table and are counted; they are left out of every
rate, as in `summary.summarize`.

Error attribution follows MoSciBench's three classes, two ways, both without a judge:
- by outcome (`errors`), for every task: `alignment` - the hand-in does not answer the question
  asked (no output, unparseable, unrealistic); `modeling` - the analysis did not run to an answer
  (exec error, timeout); `reasoning` - an answer was handed in and graded, and a check failed;
- by checkpoint (`attribution`), for the tasks that declare checkpoints: the agent's intermediate
  files against the annotator's (`stages.scoring.query.attribution`), with `unattributed` where the agent
  wrote none that decides it. Shares are of all scored runs of those tasks (MoSciBench's base:
  o4-mini ReAct 31.8 % alignment, 13.6 % modeling, 5.7 % reasoning) and of the failed ones.
  With a judge configured, the step it names for each unattributed failed run is counted apart
  (`judged_unattributed`), never added to the checkpoint classes.

Beside the score: the honesty rate (share of graded artifacts whose reported metrics agree with the
recomputed ones, `honesty_summary`) and, with a judge configured, MoSciBench's modeling
reasonableness (`modeling_reasonableness`: the mean 1-5 rating of the judged hand-ins, every judge
outcome counted apart; `stages.scoring.query.reasonableness`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from stages.catalog import TaskSpec
from stages.evaluation.journal import JournalRecord
from stages.scoring.aggregate.intervals import mean_interval, task_resamples
from stages.scoring.query.attribution import CLASSES as ATTRIBUTION_CLASSES
from stages.scoring.query.outcomes import Outcome
from stages.scoring.query.reasonableness import STAGES as JUDGE_STAGES
from stages.scoring.query.reasonableness import JudgeIdentity, Verdict, load_verdicts
from stages.scoring.query.scorer import QueryScore

AXES = ("domain", "difficulty", "category", "modality", "capability", "pipeline_stage",
        "cognitive_skill", "mas_challenge")
ATTRIBUTION = {
    Outcome.NO_OUTPUT.value: "alignment", Outcome.UNPARSEABLE.value: "alignment",
    Outcome.UNREALISTIC.value: "alignment", Outcome.EXEC_ERROR.value: "modeling",
    Outcome.TIMEOUT.value: "modeling",
}
DIGITS = 6
TOKEN_KINDS = ("prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens")
COLUMNS = ["task_id", "query_id", "outcome", "q", "reward", "exec_ok", "wall_seconds",
           "agent_seconds", "tokens", *TOKEN_KINDS, "calls", "cost_usd", "attempts", "agent_limit",
           "usage_flags", "model_reported", "attribution", "judged_attribution"]
MOSCIBENCH_SHARES = {"alignment": 0.318, "modeling": 0.136, "reasoning": 0.057}  # o4-mini ReAct, all runs


def query_frame(scored: Mapping[str, list[tuple[str, QueryScore]]],
                records: Mapping[str, JournalRecord],
                attributions: Mapping[str, str | None] | None = None,
                judged: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per query: task id -> [(query id, score)] joined with the query's journal record.

    `attributions`: a failed query's checkpoint error class (`stages.scoring.query.attribution`);
    `judged`: the judge's step for a failed query its checkpoints left unattributed.
    """
    attributions, judged = attributions or {}, judged or {}
    rows = []
    for task_id in sorted(scored):
        for query_id, score in scored[task_id]:
            record = records[query_id]
            total = record.usage.total if record.usage is not None else None
            rows.append({
                "task_id": task_id, "query_id": query_id, "outcome": score.outcome.value,
                "q": float(score.pass_rate), "reward": float(score.reward), "exec_ok": score.exec_ok,
                "wall_seconds": float(record.wall_seconds),
                "agent_seconds": float(record.wall_seconds if record.agent_seconds is None
                                       else record.agent_seconds),
                "tokens": int(record.tokens),
                **{kind: getattr(total, kind) if total is not None else None for kind in TOKEN_KINDS},
                "calls": total.calls if total is not None else 0,
                "cost_usd": record.cost_usd, "attempts": int(record.attempts),
                "agent_limit": record.agent_limit,
                "usage_flags": len(record.usage.flags) if record.usage is not None else 0,
                "model_reported": record.model_reported,
                "attribution": attributions.get(query_id),
                "judged_attribution": judged.get(query_id),
            })
    return pd.DataFrame(rows, columns=COLUMNS)


def scored_values(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Task id -> the q values of its scored (not infra-error) queries, in query id order.

    A query run in several epochs counts once, with the mean q of its scored runs: the interval is
    over the queries the benchmark draws, not over repeats of the same query.
    """
    scored = frame[frame["outcome"] != Outcome.INFRA_ERROR.value]
    per_query = scored.groupby(["task_id", "query_id"], sort=True)["q"].mean()
    return {task_id: group.to_numpy() for task_id, group in per_query.groupby(level="task_id", sort=True)}


def tag_values(spec: TaskSpec, axis: str) -> list[str]:
    """The task's values on one cut axis (tag axes can hold several values, or none)."""
    if axis in ("domain", "difficulty", "category"):
        return [str(getattr(spec, axis))]
    if axis == "modality":
        return list(spec.modalities)
    return list(getattr(spec.tags, axis))


def cuts(task_scores: Mapping[str, float | None], specs: Mapping[str, TaskSpec],
         resampled: Mapping[str, np.ndarray], level: float, resamples: int) -> dict:
    """Axis -> value -> {score, score_ci, n_tasks}: the mean task score over the tasks of each value."""
    result: dict[str, dict] = {}
    for axis in AXES:
        groups: dict[str, list[str]] = {}
        for task_id in sorted(specs):
            for value in tag_values(specs[task_id], axis):
                groups.setdefault(value, []).append(task_id)
        entries = {}
        for value in sorted(groups):
            measured = [task_scores[t] for t in groups[value] if task_scores.get(t) is not None]
            ci = mean_interval(resampled, groups[value], level, resamples)
            entries[value] = {
                "score": round(float(np.mean(measured)), DIGITS) if measured else None,
                "score_ci": ci.as_dict() if ci else None,
                "n_tasks": len(groups[value]),
            }
        result[axis] = entries
    return result


def _token_total(column: pd.Series) -> int | None:
    """A token sum; None when no query reported that kind (a server that does not count it)."""
    present = column.dropna()
    return int(present.sum()) if len(present) else None


def usage(frame: pd.DataFrame) -> dict:
    """Totals over every query of the split (infra errors included: their cost was paid).

    `cost_usd` is None when any query's cost is unknown (no price for the model, or no usage
    reported): a partial sum would read as a price. `queries_with_usage_flags` counts queries whose
    server reported missing or implausible usage.
    """
    cost = frame["cost_usd"]
    return {
        "tokens": int(frame["tokens"].sum()),
        **{kind: _token_total(frame[kind]) for kind in TOKEN_KINDS},
        "calls": int(frame["calls"].sum()),
        "cost_usd": None if cost.isna().any() else round(float(cost.sum()), DIGITS),
        "wall_seconds": round(float(frame["wall_seconds"].sum()), 3),
        "agent_seconds": round(float(frame["agent_seconds"].sum()), 3),
        "limits": {str(k): int(v) for k, v in frame["agent_limit"].dropna().value_counts().sort_index().items()},
        "queries_with_usage_flags": int((frame["usage_flags"] > 0).sum()),
        "models_reported": sorted({str(m) for m in frame["model_reported"].dropna()}),
    }


def infra(frame: pd.DataFrame) -> dict:
    """How much infrastructure trouble the run had (never scored as the agent's failure)."""
    return {
        "retried_queries": int((frame["attempts"] > 1).sum()),
        "extra_attempts": int((frame["attempts"] - 1).clip(lower=0).sum()),
        "infra_error_queries": int((frame["outcome"] == Outcome.INFRA_ERROR.value).sum()),
    }


def error_attribution(frame: pd.DataFrame) -> dict:
    """Counts of failed scored queries by MoSciBench class, and the share of each among failures."""
    scored = frame[frame["outcome"] != Outcome.INFRA_ERROR.value]
    classes = scored["outcome"].map(ATTRIBUTION)
    reasoning = (scored["outcome"] == Outcome.ANSWERED.value) & (scored["q"] < 1.0)
    classes = classes.where(~reasoning, "reasoning")
    counts = {name: int((classes == name).sum()) for name in ("alignment", "modeling", "reasoning")}
    failed = sum(counts.values())
    shares = {name: round(count / failed, DIGITS) if failed else None for name, count in counts.items()}
    return {"counts": counts, "shares": shares}


def checkpoint_attribution(frame: pd.DataFrame, checkpointed_tasks: set[str]) -> dict:
    """Failed runs of the checkpointed tasks by checkpoint class: counts, shares of all and of failed runs."""
    rows = frame[frame["task_id"].isin(checkpointed_tasks) & (frame["outcome"] != Outcome.INFRA_ERROR.value)]
    failed = rows[rows["q"] < 1.0]
    counts = {name: int((failed["attribution"] == name).sum()) for name in ATTRIBUTION_CLASSES}
    counts["unattributed"] += int(failed["attribution"].isna().sum())
    unattributed = failed[failed["attribution"].isna() | (failed["attribution"] == "unattributed")]
    judged = {name: int((unattributed["judged_attribution"] == name).sum()) for name in JUDGE_STAGES}
    return {
        "n_runs": len(rows), "n_failed": len(failed), "counts": counts,
        "judged_unattributed": judged,  # the optional judge's step for runs no checkpoint decided, apart
        "shares_of_runs": {k: round(v / len(rows), DIGITS) if len(rows) else None for k, v in counts.items()},
        "shares_of_failed": {k: round(v / len(failed), DIGITS) if len(failed) else None
                             for k, v in counts.items()},
        "moscibench_shares_of_runs": MOSCIBENCH_SHARES,
    }


def exact_match(frame: pd.DataFrame, hypothesis_tasks: set[str]) -> dict:
    """MoSciBench: share of scored hypothesis queries whose typed answer matched the gold."""
    rows = frame[frame["task_id"].isin(hypothesis_tasks) & (frame["outcome"] != Outcome.INFRA_ERROR.value)]
    return {"n_queries": len(rows),
            "rate": round(float((rows["q"] >= 1.0).mean()), DIGITS) if len(rows) else None,
            "exec_rate": round(float(rows["exec_ok"].mean()), DIGITS) if len(rows) else None}


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


def summarize_verdicts(verdicts: list[Verdict], model: str | None) -> dict:
    """MR for the summary: mean score over judged queries and every outcome counted apart."""
    scores = [v.score for v in verdicts if v.outcome == "judged"]
    return {
        "model": model, "judged": len(scores),
        "judge_unparseable": sum(v.outcome == "judge_unparseable" for v in verdicts),
        "judge_infra_error": sum(v.outcome == "judge_infra_error" for v in verdicts),
        "mean": round(sum(scores) / len(scores), 6) if scores else None,
        "judge_prompt_tokens": sum(v.prompt_tokens or 0 for v in verdicts),
        "judge_completion_tokens": sum(v.completion_tokens or 0 for v in verdicts),
    }


def modeling_reasonableness(settings, records: list[JournalRecord], path: Path) -> dict:
    """MR of the split's hand-ins under the configured judge (verdicts of other judges are ignored)."""
    judge = JudgeIdentity.of(settings)
    verdicts = load_verdicts(path)
    found = [verdicts[key] for key in (judge.verdict_key(r) for r in records if r.answer_text is not None)
             if key in verdicts]
    return summarize_verdicts(found, settings.model)


def suite(frame: pd.DataFrame, task_scores: Mapping[str, float | None], specs: Mapping[str, TaskSpec],
          resamples: int, level: float, seed: int) -> dict:
    """The sections `score@<agent>` adds to the ST-Bench summary."""
    resampled = task_resamples(scored_values(frame), resamples, seed)
    ci = mean_interval(resampled, list(resampled), level, resamples)
    hypothesis = {t for t, spec in specs.items() if spec.answer.hypothesis is not None}
    checkpointed = {t for t, spec in specs.items() if spec.checkpoints}
    return {
        "score_ci": ci.as_dict() if ci else None,
        "cuts": cuts(task_scores, specs, resampled, level, resamples),
        "usage": usage(frame),
        "infra": infra(frame),
        "errors": error_attribution(frame),
        "exact_match": exact_match(frame, hypothesis),
        "attribution": checkpoint_attribution(frame, checkpointed),
    }
