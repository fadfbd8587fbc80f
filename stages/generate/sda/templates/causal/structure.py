"""Causal templates with a variable for answer: which candidate is no cause, a mediator, the strongest cause.

An agent recovers the graph (or replays interventions) from the observational table; the naive
distractor is what correlations alone suggest.
"""

from __future__ import annotations

import numpy as np

from stages.generate.sda.templates.base import Binding, Context, Template, per_dataset, pick, quantile
from stages.generate.sda.templates.causal.shared import _dominators, _effects, _replay, _slope

MARGIN = 1.25  # the chosen entity's score is at least this multiple of the runner-up's


def _bind_non_cause(context: Context, rng: np.random.Generator) -> Binding | None:
    effect = pick(rng, context.measured(("target",)))[0]
    causes = sorted(context.scenario.ancestors(effect))
    others = [name for name in context.numeric_columns() if name not in causes and name != effect]
    if len(causes) < 3 or not others:
        return None
    candidates = sorted([*pick(rng, causes, 3), pick(rng, others)[0]])
    return {"effect": effect, "candidates": ", ".join(candidates)}


def _non_cause(context: Context, binding: Binding) -> str:
    if binding.get("naive"):  # the candidate least correlated with the effect
        table = context.table
        return min(binding["candidates"].split(", "), key=lambda name: abs(table[name].corr(table[binding["effect"]])))
    causes = context.scenario.ancestors(binding["effect"])
    left = [name for name in binding["candidates"].split(", ") if name not in causes]
    return left[0]


def _candidates_as_causes(context: Context, binding: Binding) -> list[Binding]:
    return []  # entity distractors are the other candidates (see instances)


def _bind_mediator(context: Context, rng: np.random.Generator) -> Binding | None:
    triples = [(cause, effect, mediator) for cause, effect in _effects(context)
               for mediator in _dominators(context, cause, effect)]
    if not triples:
        return None
    cause, effect, mediator = triples[rng.integers(len(triples))]
    dominators = _dominators(context, cause, effect)
    excluded = {cause, effect, *dominators}
    others = [name for name in context.measured() if name not in excluded]
    others += [name for name in context.numeric_columns() if name not in excluded and name not in others]
    others = others[:max(3, len(context.measured()) - len(excluded))]  # distractor columns only to make up 3
    if len(others) < 3:
        return None
    return {"cause": cause, "effect": effect, "candidates": ", ".join(sorted([mediator, *pick(rng, others, 3)]))}


def _mediator(context: Context, binding: Binding) -> str:
    candidates = binding["candidates"].split(", ")
    if binding.get("naive"):  # the candidate most associated with both ends (a product-of-correlations screen)
        table = context.table

        def screen(name: str) -> float:
            return abs(table[binding["cause"]].corr(table[name]) * table[name].corr(table[binding["effect"]]))

        return max(candidates, key=screen)
    dominators = _dominators(context, binding["cause"], binding["effect"])
    return next(name for name in candidates if name in dominators)


@per_dataset
def _shifts(context: Context, effect: str, candidates: list[str], naive: bool = False) -> dict[str, float]:
    """Per candidate, |change of the mean effect| when it is set to its 75th instead of its 25th percentile."""
    shifts = {}
    for name in candidates:
        low, high = (float(quantile(context, name, q)) for q in (0.25, 0.75))
        if naive:
            shifts[name] = abs(_slope(context, name, effect) * (high - low))
        else:
            means = [_replay(context, {name: value})[effect].mean() for value in (high, low)]
            shifts[name] = abs(float(means[0] - means[1]))
    return shifts


def _clear_winner(scores: dict[str, float]) -> bool:
    top, second = sorted(scores.values(), reverse=True)[:2]
    return top > 0 and top >= MARGIN * second


def _bind_strongest_cause(context: Context, rng: np.random.Generator) -> Binding | None:
    effects = [name for name in context.measured(("internal", "target")) if len(context.scenario.ancestors(name)) >= 3]
    for _ in range(4):
        if not effects:
            return None
        effect = pick(rng, effects)[0]
        causes = sorted(context.scenario.ancestors(effect))
        others = [name for name in context.measured() if name not in causes and name != effect]
        chosen = pick(rng, causes, 3) + pick(rng, others, 1) if others else pick(rng, causes, min(4, len(causes)))
        binding = {"effect": effect, "candidates": ", ".join(sorted(chosen))}
        if _clear_winner(_shifts(context, effect, sorted(chosen))):
            return binding
    return None


def _strongest_cause(context: Context, binding: Binding) -> str:
    shifts = _shifts(context, binding["effect"], binding["candidates"].split(", "), bool(binding.get("naive")))
    return max(shifts, key=shifts.get)


TEMPLATES = [
    Template("causal.non_cause", "causal",
             "Of {candidates}, which one has no causal influence on {effect}, directly or through other"
             " variables?",
             "entity", _bind_non_cause, _non_cause, _candidates_as_causes, lambda c, b: [b | {"naive": 1.0}]),
    Template("causal.mediator", "causal",
             "Of {candidates}, which one lies on every causal path from {cause} to {effect}, so that holding it"
             " fixed would leave {effect} unaffected by any change of {cause}?",
             "entity", _bind_mediator, _mediator, _candidates_as_causes,
             lambda c, b: [b | {"naive": 1.0}]),
    Template("causal.strongest_cause", "causal",
             "Suppose one variable were set to its 75th instead of its 25th percentile (as observed in the table)"
             " in every sample, everything else left to follow. For which of {candidates} would this change the"
             " mean {effect} the most in absolute value?",
             "entity", _bind_strongest_cause, _strongest_cause, _candidates_as_causes,
             lambda c, b: [b | {"naive": 1.0}]),
]
