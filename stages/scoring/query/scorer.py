"""Score one query: its outcome, which checks pass, its pass rate and its training reward.

This is the per-item scorer (inspect_ai `scorer/_match.py`); `stages.scoring.aggregate.summary`
turns many of these into task and system metrics. Only `answered` queries (parsed and realistic)
earn a pass rate or a reward; every other outcome scores 0 and is counted there as that outcome.

Gold has the shape of an answer: `{"metrics": {name: value}}`, where each value is the reference
of the training reward (missing or `null` = no reference), or `{"answer": value}`. A malformed gold
file is the benchmark's fault, never the agent's: it raises `GoldError` instead of scoring 0.

A query's `Grading` carries what the build measured on the scorer side: the reference models'
metric values (a metric with `references` passes only when it beats each named one by its
`margin` and every other graded one at all; a reference undefined on the query (e.g. the region
partition of a one-region scope) is skipped, and a metric none of whose named references is
defined is the benchmark's fault, `GoldError`) and, for a hypothesis with a bootstrap, the
tolerance that replaces the spec's `rel_tol` / `abs_tol`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import fmean

from stages.catalog import AnswerSpec, MetricSpec
from stages.scoring.query.checks import (
    hypothesis_matches,
    lower_is_better,
    metric_reward,
    target_satisfied,
)
from stages.scoring.query.outcomes import (
    Execution,
    Outcome,
    answer_kind,
    as_finite,
    classify,
    parse_document,
)

HYPOTHESIS_CHECK = "answer"


class GoldError(ValueError):
    """The gold answer does not fit the task's answer spec."""


@dataclass(frozen=True)
class Grading:
    """Build-time measurements of one query: reference metrics and a bootstrap tolerance."""

    references: dict[str, dict[str, float | None]] = field(default_factory=dict)
    tolerance: float | None = None


NO_GRADING = Grading()


def other_references(metric: MetricSpec, grading: Grading) -> list[str]:
    """The graded models a metric must also beat (strictly) besides its named ones."""
    if not metric.beat_other_models:
        return []
    return [name for name, values in grading.references.items()
            if name not in metric.references and values.get(metric.name) is not None]


def beats_references(metric: MetricSpec, value: float, grading: Grading) -> bool:
    """Whether `value` beats every reference model of the query (a metric with references only).

    Each named one by more than the metric's margin; every other graded one at all.
    """
    if not metric.references:
        return True
    lower = lower_is_better(metric)
    defined = [name for name in metric.references
               if grading.references.get(name, {}).get(metric.name) is not None]
    if not defined:
        raise GoldError(f"metric {metric.name}: none of its reference models {metric.references} "
                        "has a value on this query")
    others = other_references(metric, grading)
    for name in defined + others:
        reference = grading.references[name][metric.name]
        margin = 0.0
        if name in defined:
            margin = metric.margin * (abs(reference) if metric.margin_kind == "relative" else 1.0)
        if (value >= reference - margin) if lower else (value <= reference + margin):
            return False
    return True


@dataclass(frozen=True)
class QueryScore:
    """The score of one query.

    Attributes:
        outcome: What happened (see `Outcome`).
        exec_ok: Whether the program exited with code 0 (MoSciBench Exec).
        metric_passes: Metric name -> check passed, for every defined metric of an answered
            metrics task; `{"answer": passed}` for an answered hypothesis task; empty otherwise.
        pass_rate: Share of `metric_passes` that pass; 0.0 unless answered.
        reward: ST-Bench training reward in [0, 1]; 0.0 unless answered.
    """

    outcome: Outcome
    exec_ok: bool
    metric_passes: dict[str, bool]
    pass_rate: float
    reward: float


def _references(spec: AnswerSpec, gold: dict) -> dict[str, float | None]:
    reported = gold.get("metrics") if isinstance(gold, dict) else None
    if not isinstance(reported, dict):
        raise GoldError(f"gold needs a `metrics` object, got {gold!r}")
    references: dict[str, float | None] = {}
    for metric in spec.metrics or []:
        raw = reported.get(metric.name)
        references[metric.name] = None if raw is None else as_finite(raw)
        if raw is not None and references[metric.name] is None:
            raise GoldError(f"gold metric {metric.name}: {raw!r} is not a finite number")
    return references


def _gold_answer(spec: AnswerSpec, gold: dict) -> object:
    parsed = parse_document(spec, gold)
    if parsed is None:
        raise GoldError(f"gold {gold!r} does not fit the {spec.hypothesis.format} format")
    return parsed["answer"]


def _score_metrics(spec: AnswerSpec, parsed: dict, references: dict[str, float | None],
                   grading: Grading) -> tuple[dict[str, bool], float]:
    values = parsed["metrics"]
    passes, rewards = {}, []
    for metric in spec.metrics or []:
        value = values.get(metric.name)
        passes[metric.name] = (value is not None and target_satisfied(metric, value)
                               and beats_references(metric, value, grading))
        reference = references[metric.name]
        rewards.append(0.0 if value is None else metric_reward(metric, value, reference))
    return passes, fmean(rewards)


def _score_hypothesis(spec: AnswerSpec, parsed: dict, gold_answer: object,
                      grading: Grading) -> tuple[dict[str, bool], float]:
    hypothesis = spec.hypothesis
    if grading.tolerance is not None:
        hypothesis = hypothesis.model_copy(update={"rel_tol": 0.0, "abs_tol": grading.tolerance})
    passed = hypothesis_matches(hypothesis, parsed["answer"], gold_answer)
    return {HYPOTHESIS_CHECK: passed}, float(passed)


GOLD_VALIDATORS: dict[str, Callable[[AnswerSpec, dict], object]] = {
    "metrics": _references,
    "hypothesis": _gold_answer,
}
SCORERS: dict[str, Callable[[AnswerSpec, dict, object, Grading], tuple[dict[str, bool], float]]] = {
    "metrics": _score_metrics,
    "hypothesis": _score_hypothesis,
}


def score_query(spec: AnswerSpec, execution: Execution, gold: dict,
                grading: Grading = NO_GRADING) -> QueryScore:
    """Score one query of a task.

    Args:
        spec: The task's answer spec.
        execution: What the harness recorded for the run (for a graded task: with the recomputed
            metrics as its answer, see `stages.scoring.query.recompute`).
        gold: The annotator's gold answer for this query.
        grading: The query's reference values and bootstrap tolerance.

    Returns:
        The query's outcome, pass flags, pass rate and training reward.

    Raises:
        GoldError: If the gold answer does not fit the spec (checked for every outcome).
    """
    kind = answer_kind(spec)
    validated = GOLD_VALIDATORS[kind](spec, gold)  # the references, or the gold answer
    outcome, parsed = classify(spec, execution)
    if outcome is not Outcome.ANSWERED or parsed is None:
        return QueryScore(outcome, execution.exec_ok, {}, 0.0, 0.0)
    passes, reward = SCORERS[kind](spec, parsed, validated, grading)
    pass_rate = sum(passes.values()) / len(passes)
    return QueryScore(outcome, execution.exec_ok, passes, pass_rate, reward)
