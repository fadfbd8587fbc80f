"""Turn query scores into task scores, a system summary, and comparisons with a baseline.

ST-Bench §3.2 (Cheng et al., 2026, arXiv:2610.07763): per task, `success_rate_t` is the share of
scored queries that are realistic (`answered`), `pass_rate_t` the mean per-query pass rate over
realistic queries (0 when none), `score_t = success_rate_t * pass_rate_t`; the system score is
100 times the mean over tasks. Against a baseline SA: `win_rate` = share of tasks with
score_M > score_SA, `delta_perf` = mean(score_M - score_SA), and
`efficiency` = delta_perf / max(rho - 1, 0.1) for a cost ratio rho.

Denominators: every outcome except `infra_error` is scored (a timeout or an unparseable answer
counts as a query the system failed); `infra_error` queries are excluded from every rate and counted
apart in `outcomes`. Decisions where SPEC §5 is silent:
- A task whose queries are all infra errors has no measured rate: its rates and score are None
  (`null` in JSON) and it is left out of the system mean (it still counts in `n_tasks`).
- `exec_rate`, `realistic_rate`, `pass_rate_given_realistic` and `reward_mean` of the summary pool
  queries across tasks; the system `score` is the mean over tasks. An empty pool gives None.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import fmean

from stages.scoring.query.outcomes import Outcome
from stages.scoring.query.scorer import QueryScore

DIGITS = 6
MIN_EXTRA_COST = 0.1


@dataclass(frozen=True)
class TaskScore:
    """ST-Bench score of one task; rates are None when no query was scored."""

    n_queries: int
    n_scored: int
    n_infra_error: int
    success_rate: float | None
    pass_rate: float | None
    score: float | None
    reward_mean: float | None
    outcomes: dict[str, int]


def count_outcomes(scores: Iterable[QueryScore]) -> dict[str, int]:
    """Count queries per outcome, with every `Outcome` present (zeros included)."""
    counts = Counter(score.outcome for score in scores)
    return {outcome.value: counts[outcome] for outcome in Outcome}


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return fmean(values) if values else None


def _scored(scores: Iterable[QueryScore]) -> list[QueryScore]:
    return [score for score in scores if score.outcome is not Outcome.INFRA_ERROR]


def _is_realistic(score: QueryScore) -> float:
    return float(score.outcome is Outcome.ANSWERED)


def _realistic(scores: Iterable[QueryScore]) -> list[QueryScore]:
    return [score for score in scores if score.outcome is Outcome.ANSWERED]


def score_task(scores: list[QueryScore]) -> TaskScore:
    """Score one task from its queries' scores (infra errors excluded from every rate)."""
    scored = _scored(scores)
    realistic = _realistic(scored)
    success_rate = _mean(_is_realistic(score) for score in scored)
    # ST-Bench: pass_rate_t is 0 when the task has scored queries but none realistic.
    pass_rate = (_mean(score.pass_rate for score in realistic) or 0.0) if scored else None
    return TaskScore(
        n_queries=len(scores),
        n_scored=len(scored),
        n_infra_error=len(scores) - len(scored),
        success_rate=success_rate,
        pass_rate=pass_rate,
        score=None if success_rate is None or pass_rate is None else success_rate * pass_rate,
        reward_mean=_mean(score.reward for score in scored),
        outcomes=count_outcomes(scores),
    )


def _round(value: float | None, scale: float = 1.0) -> float | None:
    return None if value is None else round(scale * value, DIGITS)


def _task_entry(task: TaskScore) -> dict:
    return {
        "score": _round(task.score, 100.0),
        "success_rate": _round(task.success_rate),
        "pass_rate": _round(task.pass_rate),
        "reward_mean": _round(task.reward_mean),
        "n_queries": task.n_queries,
        "outcomes": task.outcomes,
    }


def summarize(per_task: dict[str, list[QueryScore]]) -> dict:
    """Summarise a run as a JSON-able dict (serialise with `sort_keys=True`).

    Args:
        per_task: Task id -> the scores of its queries.

    Returns:
        `score` (0-100, mean over tasks), `n_tasks`, `n_queries`, `outcomes` (pooled counts),
        `exec_rate`, `realistic_rate`, `pass_rate_given_realistic`, `reward_mean` (pooled over
        scored queries) and `tasks` (task id -> score (0-100), success_rate, pass_rate,
        reward_mean, n_queries, outcomes). Floats are rounded to 6 decimals.
    """
    tasks = {task_id: score_task(scores) for task_id, scores in per_task.items()}
    queries = [score for scores in per_task.values() for score in scores]
    scored = _scored(queries)
    realistic = _realistic(scored)
    task_scores = [task.score for task in tasks.values() if task.score is not None]
    return {
        "score": _round(_mean(task_scores), 100.0),
        "n_tasks": len(tasks),
        "n_queries": len(queries),
        "outcomes": count_outcomes(queries),
        "exec_rate": _round(_mean(float(score.exec_ok) for score in scored)),
        "realistic_rate": _round(_mean(_is_realistic(score) for score in scored)),
        "pass_rate_given_realistic": _round(_mean(score.pass_rate for score in realistic)),
        "reward_mean": _round(_mean(score.reward for score in scored)),
        "tasks": {task_id: _task_entry(tasks[task_id]) for task_id in sorted(tasks)},
    }


def task_scores(summary: dict) -> dict[str, float | None]:
    """Task id -> score (0-100) of a `summarize` result, the input of the comparisons below."""
    return {task_id: entry["score"] for task_id, entry in summary["tasks"].items()}


def _paired(
    system: Mapping[str, float | None], baseline: Mapping[str, float | None]
) -> list[tuple[float, float]]:
    common = sorted(
        task_id
        for task_id in system.keys() & baseline.keys()
        if system[task_id] is not None and baseline[task_id] is not None
    )
    if not common:
        raise ValueError("no task is scored in both the system and the baseline")
    return [(system[task_id], baseline[task_id]) for task_id in common]


def win_rate(system: Mapping[str, float | None], baseline: Mapping[str, float | None]) -> float:
    """Share of tasks, scored in both, where the system's score beats the baseline's strictly.

    Raises:
        ValueError: If no task is scored in both.
    """
    return fmean(float(m > sa) for m, sa in _paired(system, baseline))


def delta_perf(system: Mapping[str, float | None], baseline: Mapping[str, float | None]) -> float:
    """Mean score gain over tasks scored in both, in the unit of the inputs (points for 0-100).

    Raises:
        ValueError: If no task is scored in both.
    """
    return fmean(m - sa for m, sa in _paired(system, baseline))


def efficiency(delta: float, cost_ratio: float) -> float:
    """ST-Bench efficiency `eta = delta_perf / max(rho - 1, 0.1)` for a cost ratio rho."""
    return delta / max(cost_ratio - 1.0, MIN_EXTRA_COST)
