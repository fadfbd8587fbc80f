"""Causal templates: answers come from replaying the hidden generator under interventions, or its graph.

An agent sees only the observational table, so it has to adjust for confounding (or recover the
graph) to answer; the confusion distractor of each template is the answer a naive observational
analysis gives, which is what SDA's Relationship errors look like.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from stages.generate.sda.templates.base import Binding, Context, Template, line_fit, per_dataset, pick, quantile

REPLAYS_KEPT = 512  # replayed tables kept in memory (an entity template replays every candidate)
MIN_EFFECT = 0.1  # an effect asked about is at least this share of the effect variable's SD
MARGIN = 1.25  # the chosen entity's score is at least this multiple of the runner-up's
_REPLAYS: dict[tuple, pd.DataFrame] = {}
_GRAPHS: dict[str, _Graph] = {}


def _rounded(value: float) -> float:
    """`value` at the precision the question shows it (4 significant digits), so both agree."""
    return float(f"{value:.4g}")


@per_dataset
def _scenario_json(context: Context) -> str:
    """The scenario as JSON, which keys the replays and graphs kept across contexts."""
    return context.scenario.model_dump_json()


def _replay(context: Context, do: dict[str, float]) -> pd.DataFrame:
    """The table of `context.intervened(do)`, kept so that a binder and its derivation share replays."""
    hidden = context.simulation.hidden
    key = (_scenario_json(context), hidden["n_rows"], hidden["seed"], tuple(sorted(do.items())))
    if key not in _REPLAYS:
        if len(_REPLAYS) >= REPLAYS_KEPT:
            del _REPLAYS[next(iter(_REPLAYS))]
        _REPLAYS[key] = context.intervened(do).table
    return _REPLAYS[key]


@dataclass(frozen=True)
class _Graph:
    """A scenario's causal structure, as the causal templates query it (computed once per scenario)."""

    effects: list[tuple[str, str]]  # (cause, effect): effect is computed, cause one of its ancestors
    between: dict[tuple[str, str], list[str]]  # variables on at least one path from cause to effect
    dominators: dict[tuple[str, str], list[str]]  # variables on every path from cause to effect
    partial: list[tuple[str, str, str]]  # (cause, mediator, effect): mediator on some but not every path


def _graph(context: Context) -> _Graph:
    key = _scenario_json(context)
    if key not in _GRAPHS:
        scenario = context.scenario
        ancestors = {name: scenario.ancestors(name) for name in context.measured()}
        effects = [(cause, effect) for effect in context.measured(("internal", "target"))
                   for cause in sorted(ancestors[effect])]
        between = {(cause, effect): sorted(name for name in ancestors[effect] if cause in ancestors[name])
                   for cause, effect in effects}
        cut = {(cause, effect, name): not _reaches(context, cause, effect, name)
               for (cause, effect), names in between.items() for name in names}
        dominators = {pair: [name for name in names if cut[(*pair, name)]] for pair, names in between.items()}
        partial = [(cause, name, effect) for (cause, effect), names in between.items() for name in names
                   if not cut[(cause, effect, name)]]
        if len(_GRAPHS) >= REPLAYS_KEPT:
            del _GRAPHS[next(iter(_GRAPHS))]
        _GRAPHS[key] = _Graph(effects, between, dominators, partial)
    return _GRAPHS[key]


def _effects(context: Context) -> list[tuple[str, str]]:
    """(cause, effect) pairs where effect is computed and cause is one of its ancestors."""
    return _graph(context).effects


def _reaches(context: Context, cause: str, effect: str, avoiding: str | None = None) -> bool:
    """Whether a directed path leads from `cause` to `effect` without passing through `avoiding`."""
    computed = {m.output for m in context.scenario.mechanisms}
    frontier, seen = [effect], set()
    while frontier:
        node = frontier.pop()
        if node == cause:
            return True
        if node in seen or node == avoiding:
            continue
        seen.add(node)
        if node in computed:
            frontier.extend(context.scenario.mechanism(node).parents())
    return False


def _dominators(context: Context, cause: str, effect: str) -> list[str]:
    """Variables on every directed path from `cause` to `effect`: holding one fixed cuts the effect."""
    return _graph(context).dominators.get((cause, effect), [])


def _partial_mediators(context: Context) -> list[tuple[str, str, str]]:
    """(cause, mediator, effect): the mediator is on some but not every path from cause to effect."""
    return _graph(context).partial


@per_dataset
def _slope(context: Context, x: str, y: str) -> float:
    """The observational least-squares slope of `y` on `x` (the naive causal effect per unit)."""
    return float(line_fit(context.table[x], context.table[y], 1)[0])


def _bind_do_mean(context: Context, rng: np.random.Generator) -> Binding | None:
    pairs = _effects(context)
    if not pairs:
        return None
    cause, effect = pairs[rng.integers(len(pairs))]
    value = _rounded(quantile(context, cause, float(rng.choice([0.2, 0.8]))))
    return {"cause": cause, "effect": effect, "value": value}


@per_dataset
def _do_mean(context: Context, binding: Binding) -> float:
    return float(_replay(context, {binding["cause"]: binding["value"]})[binding["effect"]].mean())


def _other_causes(context: Context, binding: Binding) -> list[Binding]:
    """Up to two other causes of the effect set instead, each at the same percentile of its own values."""
    rank = float((context.table[binding["cause"]] <= binding["value"]).mean())
    return [binding | {"cause": other, "value": _rounded(quantile(context, other, min(rank, 1.0)))}
            for other, effect in _effects(context) if effect == binding["effect"] and other != binding["cause"]][:2]


def _observed_near(context: Context, binding: Binding) -> list[Binding]:
    """The naive answer: the mean effect among the samples whose cause is closest to the value."""
    return [binding | {"naive": 1.0}]


def _nearest_rows(context: Context, binding: Binding) -> pd.DataFrame:
    """The tenth of the samples (at least 5) whose cause lies closest to the binding's value."""
    table = context.table
    distance = (table[binding["cause"]] - binding["value"]).abs()
    return table.loc[distance.nsmallest(max(len(table) // 10, 5)).index]


def _do_mean_or_naive(context: Context, binding: Binding) -> float:
    if not binding.get("naive"):
        return _do_mean(context, binding)
    return float(_nearest_rows(context, binding)[binding["effect"]].mean())


def _bind_contrast(context: Context, rng: np.random.Generator) -> Binding | None:
    pairs = _effects(context)
    if not pairs:
        return None
    cause, effect = pairs[rng.integers(len(pairs))]
    low, high = (_rounded(quantile(context, cause, q)) for q in (0.25, 0.75))
    return {"cause": cause, "effect": effect, "low": low, "high": high}


@per_dataset
def _contrast(context: Context, binding: Binding) -> float:
    if binding.get("naive"):  # the observational regression slope times the contrast
        return _slope(context, binding["cause"], binding["effect"]) * (binding["high"] - binding["low"])
    means = [_replay(context, {binding["cause"]: binding[end]})[binding["effect"]].mean() for end in ("high", "low")]
    return float(means[0] - means[1])


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


def _bind_direct_effect(context: Context, rng: np.random.Generator) -> Binding | None:
    triples = _partial_mediators(context)
    for _ in range(4):
        if not triples:
            return None
        cause, mediator, effect = triples[rng.integers(len(triples))]
        low, high = (_rounded(quantile(context, cause, q)) for q in (0.25, 0.75))
        binding = {"cause": cause, "condition": mediator, "effect": effect, "low": low, "high": high,
                   "value": _rounded(context.table[mediator].median())}
        if abs(_direct_effect(context, binding)) >= MIN_EFFECT * context.table[effect].std():
            return binding
    return None


@per_dataset
def _direct_effect(context: Context, binding: Binding) -> float:
    """The controlled direct effect: the contrast of the cause with the mediator held at the value."""
    if binding.get("naive"):
        return _slope(context, binding["cause"], binding["effect"]) * (binding["high"] - binding["low"])
    if binding.get("unheld"):  # the total effect: the mediator left to follow
        return _contrast(context, binding)
    held = {binding["condition"]: binding["value"]}
    means = [_replay(context, held | {binding["cause"]: binding[end]})[binding["effect"]].mean()
             for end in ("high", "low")]
    return float(means[0] - means[1])


def _bind_mediated_share(context: Context, rng: np.random.Generator) -> Binding | None:
    for _ in range(4):
        binding = _bind_direct_effect(context, rng)
        if binding is None:
            return None
        total = _contrast(context, binding)
        if abs(total) >= MIN_EFFECT * context.table[binding["effect"]].std() and 0.1 <= _mediated_share(
                context, binding) <= 1.5:
            return binding
    return None


@per_dataset
def _mediated_share(context: Context, binding: Binding) -> float:
    """1 - (controlled direct effect) / (total effect), both for the same contrast of the cause."""
    if binding.get("naive"):  # the difference method: the cause's coefficient without and with the mediator
        table = context.table
        design = np.column_stack([np.ones(len(table)), table[binding["cause"]], table[binding["condition"]]])
        adjusted = np.linalg.lstsq(design, table[binding["effect"]].to_numpy(), rcond=None)[0][1]
        return float(1 - adjusted / _slope(context, binding["cause"], binding["effect"]))
    return float(1 - _direct_effect(context, binding) / _contrast(context, binding))


def _other_mediators(context: Context, binding: Binding) -> list[Binding]:
    return [binding | {"condition": m} for c, m, e in _partial_mediators(context)
            if (c, e) == (binding["cause"], binding["effect"]) and m != binding["condition"]]


def _bind_do_spread(context: Context, rng: np.random.Generator) -> Binding | None:
    pairs = _effects(context)
    for _ in range(4):
        if not pairs:
            return None
        cause, effect = pairs[rng.integers(len(pairs))]
        value = _rounded(quantile(context, cause, float(rng.choice([0.2, 0.5, 0.8]))))
        binding = {"cause": cause, "effect": effect, "value": value}
        if abs(_do_spread(context, binding) / context.table[effect].std() - 1) >= 0.2:
            return binding
    return None


@per_dataset
def _do_spread(context: Context, binding: Binding) -> float:
    if binding.get("naive"):
        return float(_nearest_rows(context, binding)[binding["effect"]].std())
    if binding.get("unset"):  # the observational spread, as if setting the cause changed nothing
        return float(context.table[binding["effect"]].std())
    return float(_replay(context, {binding["cause"]: binding["value"]})[binding["effect"]].std())


TEMPLATES = [
    Template("causal.do_mean", "causal",
             "Suppose {cause} were set to {value} {cause_unit} in every sample, everything else left to"
             " follow. What would the mean {effect} (in {effect_unit}) be?",
             "number", _bind_do_mean, _do_mean_or_naive,
             _other_causes,
             _observed_near, tolerance=0.03),
    Template("causal.contrast", "causal",
             "By how much would the mean {effect} (in {effect_unit}) change if {cause} were set to {high}"
             " instead of {low} {cause_unit} in every sample?",
             "number", _bind_contrast, _contrast,
             lambda c, b: [b | {"low": b["high"], "high": b["low"]}],
             lambda c, b: [b | {"naive": 1.0}], tolerance=0.1),
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
    Template("causal.controlled_direct_effect", "causal",
             "Suppose {condition} were held at {value} {condition_unit} in every sample. By how much would the"
             " mean {effect} (in {effect_unit}) then change if {cause} were also set to {high} instead of {low}"
             " {cause_unit}, everything else left to follow?",
             "number", _bind_direct_effect, _direct_effect,
             lambda c, b: [b | {"low": b["high"], "high": b["low"]}],
             lambda c, b: [b | {"naive": 1.0}, b | {"unheld": 1.0}], tolerance=0.1),
    Template("causal.mediated_share", "causal",
             "Setting {cause} to {high} instead of {low} {cause_unit} in every sample changes the mean {effect}."
             " What fraction of that change would disappear if {condition} were in addition held at {value}"
             " {condition_unit} in every sample (one minus the ratio of the change with {condition} held to the"
             " change without)?",
             "number", _bind_mediated_share, _mediated_share, _other_mediators,
             lambda c, b: [b | {"naive": 1.0}], tolerance=0.1),
    Template("causal.do_spread", "causal",
             "Suppose {cause} were set to {value} {cause_unit} in every sample, everything else left to follow."
             " What would the standard deviation (n - 1 denominator) of {effect} (in {effect_unit}) across the"
             " samples be?",
             "number", _bind_do_spread, _do_spread,
             _other_causes,
             lambda c, b: [b | {"naive": 1.0}, b | {"unset": 1.0}], tolerance=0.1),
]
