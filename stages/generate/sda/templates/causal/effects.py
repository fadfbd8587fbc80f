"""Causal templates with a number for answer: the effect of an intervention, direct or mediated.

The mean and the spread of an effect with its cause set, the contrast of two settings, the
controlled direct effect with a mediator held, and the share of an effect that a mediator carries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stages.generate.sda.templates.base import Binding, Context, Template, per_dataset, quantile
from stages.generate.sda.templates.causal.shared import (
    _effects,
    _partial_mediators,
    _replay,
    _rounded,
    _slope,
)

MIN_EFFECT = 0.1  # an effect asked about is at least this share of the effect variable's SD


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
