"""Mechanistic templates that state a functional form and ask for the parameter a fit gives.

The forms are a power law, an exponential, a saturating curve and Arrhenius.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import optimize

from stages.generate.sda.templates.base import Binding, Context, Template, line_fit, per_dataset, swapped
from stages.generate.sda.templates.mechanistic.shared import (
    GAS_CONSTANT,
    KELVIN_OFFSET,
    _per_dataset,
)


@per_dataset
def _positive_edges(context: Context) -> list[tuple[str, str]]:
    table = context.table
    positive = {name for name in context.measured() if (table[name] > 0).all()}
    return [(x, y) for x, y in context.scenario.edges() if x in positive and y in positive]


def _bind_edge(context: Context, rng: np.random.Generator) -> Binding | None:
    edges = _positive_edges(context)
    if not edges:
        return None
    x, y = edges[rng.integers(len(edges))]
    return {"x": x, "y": y}


def _log_log_slope(context: Context, binding: Binding) -> float:
    x, y = context.table[binding["x"]].to_numpy(), context.table[binding["y"]].to_numpy()
    if binding.get("linear"):
        return float(line_fit(x, y, 1)[0])
    return float(line_fit(np.log(x), np.log(y), 1)[0])


def _semi_log_rate(context: Context, binding: Binding) -> float:
    x, y = context.table[binding["x"]].to_numpy(), context.table[binding["y"]].to_numpy()
    if binding.get("reciprocal"):
        return float(line_fit(1 / x, np.log(y), 1)[0])
    return float(line_fit(x, np.log(y), 1)[0])


@per_dataset
def _positive_pairs(context: Context) -> list[tuple[str, str]]:
    """(x, y): x acts on y, directly or not, and both are positive throughout."""
    table = context.table
    positive = {name for name in context.measured() if (table[name] > 0).all()}
    return [(x, y) for y in context.measured(("internal", "target")) if y in positive
            for x in sorted(context.scenario.ancestors(y)) if x in positive]


def _saturating_fit(context: Context, binding: Binding) -> tuple[float, float]:
    """The half-saturation constant K of `y = top * x / (K + x)` fitted by least squares, and its relative SE."""
    x, y = context.table[binding["x"]].to_numpy(), context.table[binding["y"]].to_numpy()
    if binding.get("reciprocal"):  # Lineweaver-Burk: 1/y = 1/top + (K/top) (1/x), fitted by OLS
        slope, intercept = line_fit(1 / x, 1 / y, 1)
        return float(slope / intercept), 0.0
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            (top, half), covariance = optimize.curve_fit(lambda v, top, half: top * v / (half + v), x, y,
                                                         p0=[2 * y.max(), float(np.median(x))], maxfev=20000)
        except (RuntimeError, ValueError):
            return float("nan"), float("nan")
    return float(half), float(np.sqrt(covariance[1, 1]) / abs(half))


@_per_dataset
def _saturating_pairs(context: Context) -> list[tuple[str, str]]:
    """Positive (x, y) pairs whose saturating fit is determined: K positive, below twice the largest x."""
    pairs = []
    for x, y in _positive_pairs(context):
        half, relative_se = _saturating_fit(context, {"x": x, "y": y})
        if 0 < half < 2 * context.table[x].max() and relative_se < 0.1:
            pairs.append((x, y))
    return pairs


def _bind_saturating(context: Context, rng: np.random.Generator) -> Binding | None:
    pairs = _saturating_pairs(context)
    if not pairs:
        return None
    x, y = pairs[rng.integers(len(pairs))]
    return {"x": x, "y": y}


def _neighbour_edges(context: Context, binding: Binding) -> list[Binding]:
    """The same fit on another cause of y, or on another effect of x (a column's role confused)."""
    edges = _positive_pairs(context)
    return ([binding | {"x": x} for x, y in edges if y == binding["y"] and x != binding["x"]][:1]
            + [binding | {"y": y} for x, y in edges if x == binding["x"] and y != binding["y"]][:1])


def _half_saturation(context: Context, binding: Binding) -> float:
    return _saturating_fit(context, binding)[0]


@per_dataset
def _temperature_pairs(context: Context) -> list[tuple[str, str]]:
    """(temperature, y): y is computed from the temperature (directly or not) and positive throughout."""
    table = context.table
    pairs = []
    for y in context.measured(("internal", "target")):
        if not (table[y] > 0).all():
            continue
        for x in sorted(context.scenario.ancestors(y)):
            offset = KELVIN_OFFSET.get(context.scenario.variable(x).unit)
            if offset is not None and (table[x] + offset > 0).all():
                pairs.append((x, y))
    return pairs


def _arrhenius_fit(context: Context, binding: Binding) -> tuple[float, float]:
    """Ea (kJ/mol) from the OLS slope of ln y on 1/T, and the slope's relative standard error."""
    x, y = context.table[binding["x"]].to_numpy(), context.table[binding["y"]].to_numpy()
    offset = 0.0 if binding.get("celsius") else KELVIN_OFFSET[context.scenario.variable(binding["x"]).unit]
    logarithm = np.log10 if binding.get("log10") else np.log
    (slope, _), covariance = line_fit(1 / (x + offset), logarithm(y), 1, cov=True)
    return float(-slope * GAS_CONSTANT / 1000), float(np.sqrt(covariance[0, 0]) / abs(slope))


@_per_dataset
def _arrhenius_pairs(context: Context) -> list[tuple[str, str]]:
    return [(x, y) for x, y in _temperature_pairs(context) if _arrhenius_fit(context, {"x": x, "y": y})[1] < 0.03]


def _bind_arrhenius(context: Context, rng: np.random.Generator) -> Binding | None:
    pairs = _arrhenius_pairs(context)
    if not pairs:
        return None
    x, y = pairs[rng.integers(len(pairs))]
    return {"x": x, "y": y}


def _activation_energy(context: Context, binding: Binding) -> float:
    return _arrhenius_fit(context, binding)[0]


def _arrhenius_slips(context: Context, binding: Binding) -> list[Binding]:
    """log10 instead of ln; for a Celsius column also 1/x without the conversion to kelvin."""
    slips = [binding | {"log10": 1.0}]
    if context.scenario.variable(binding["x"]).unit == "degC" and (context.table[binding["x"]] > 0).all():
        slips.append(binding | {"celsius": 1.0})
    return slips


def _other_responses(context: Context, binding: Binding) -> list[Binding]:
    return [binding | {"y": y} for x, y in _temperature_pairs(context) if x == binding["x"] and y != binding["y"]][:2]


TEMPLATES = [
    Template("mechanistic.power_law_exponent", "mechanistic",
             "Assume {y} is proportional to a power of {x}. What exponent does an ordinary least-squares fit of"
             " log({y}) on log({x}) give?",
             "number", _bind_edge, _log_log_slope, lambda c, b: [swapped(b, "x", "y")],
             lambda c, b: [b | {"linear": 1.0}], tolerance=0.03),
    Template("mechanistic.exponential_rate", "mechanistic",
             "Assume {y} changes exponentially with {x}. What rate (per {x_unit}) does an ordinary least-squares"
             " fit of ln({y}) on {x} give?",
             "number", _bind_edge, _semi_log_rate, lambda c, b: [swapped(b, "x", "y")],
             lambda c, b: [b | {"reciprocal": 1.0}], tolerance=0.03),
    Template("mechanistic.half_saturation", "mechanistic",
             "Assume {y} saturates with {x} as {y} = top * {x} / (K + {x}). What half-saturation constant K"
             " (in {x_unit}) does a nonlinear least-squares fit of this curve to the table give?",
             "number", _bind_saturating, _half_saturation, _neighbour_edges,
             lambda c, b: [b | {"reciprocal": 1.0}], tolerance=0.05),
    Template("mechanistic.activation_energy", "mechanistic",
             "Assume {y} follows an Arrhenius law in the temperature {x}: {y} = A exp(-Ea / (R T)), with T the"
             " absolute temperature in K and R = 8.314 J/(mol K). What activation energy Ea (in kJ/mol) does an"
             " ordinary least-squares fit of ln({y}) on 1/T give?",
             "number", _bind_arrhenius, _activation_energy, _other_responses, _arrhenius_slips, tolerance=0.03),
]
