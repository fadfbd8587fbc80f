"""Checks of one reported value: metric targets, hypothesis matches, and the training reward.

Metric targets and the reward follow ST-Bench §3.2 and Appendix C.3 (Cheng et al., 2026,
arXiv:2610.07763); hypothesis matching follows MoSciBench's exact match with typed comparators and
task tolerances (categorical strict, no "gold is a substring" leniency).

Decisions where SPEC §5 is silent:
- `==` targets count as higher-is-better in the reward's reference term (only `lower is better`,
  `<` and `<=` are lower-is-better).
- A value outside the metric's valid range earns no reference term: an impossible value (NSE = 3)
  must not collect reward by beating the reference.
- A negative reference (e.g. NSE -0.2) is scored by mirroring: reaching or beating it earns 1,
  falling short earns the magnitude ratio (reference/value for higher-is-better), so a better value
  never earns less. A lower-is-better reference of 0 earns 1 only for a value of 0.
- Hypothesis tolerances absorb float representation error (relative 1e-9): 0.33 is within 10% of
  0.3 although `0.33 - 0.3 > 0.1 * 0.3` in binary floating point. Strict comparators (`>`, `<`)
  treat values that close to the bound as equal to it, hence failing.
- A hypothesis number (or numeric list item) outside the spec's valid range fails.
- Coordinate longitudes compare across the antimeridian (179.999 and -179.999 are 0.002 apart).
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from typing import Any

from stages.catalog import DIRECTIONAL_TARGETS, TARGET_PATTERN, HypothesisSpec, MetricSpec
from stages.scoring.query.outcomes import as_finite

FLOAT_SLACK = 1e-9
DEFAULT_COORDINATE_TOL_DEG = 0.01
WEIGHTS = {"sanity": 0.10, "target": 0.40, "reference": 0.50}
WEIGHTS_NO_REFERENCE = {"sanity": 0.40, "target": 0.60}

TARGET_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": lambda value, threshold: math.isclose(value, threshold, rel_tol=FLOAT_SLACK),
}
LOWER_IS_BETTER_OPERATORS = ("<", "<=")


@functools.cache  # a task's few target strings, parsed once
def _comparison(target: str) -> tuple[str, float]:
    match = TARGET_PATTERN.match(target)
    if match is None:
        raise ValueError(f"unreadable target {target!r}")
    return match.group(1), float(match.group(2))


def in_valid_range(value: float, valid_range: tuple[float | None, float | None]) -> bool:
    """Whether `value` is finite and inside `valid_range` (bounds inclusive, None = unbounded)."""
    low, high = valid_range
    above_low = low is None or value >= low
    return math.isfinite(value) and above_low and (high is None or value <= high)


def target_satisfied(metric: MetricSpec, value: float) -> bool:
    """Whether a finite in-range `value` meets the metric's target.

    Directional targets (`lower is better`, `higher is better`) are met by any finite value in
    the valid range; a value outside the valid range fails every target.
    """
    if not in_valid_range(value, metric.valid_range):
        return False
    if metric.target in DIRECTIONAL_TARGETS:
        return True
    symbol, threshold = _comparison(metric.target)
    return TARGET_OPERATORS[symbol](value, threshold)


def lower_is_better(metric: MetricSpec) -> bool:
    """Whether smaller values of the metric are better (`lower is better`, `<`, `<=`)."""
    if metric.target in DIRECTIONAL_TARGETS:
        return metric.target == "lower is better"
    return _comparison(metric.target)[0] in LOWER_IS_BETTER_OPERATORS


def _reference_term(value: float, reference: float, lower: bool) -> float:
    if reference > 0:
        ratio = reference / value if lower else value / reference
    elif reference < 0:
        if (value <= reference) if lower else (value >= reference):
            return 1.0
        ratio = value / reference if lower else reference / value
    else:  # a lower-is-better reference of exactly 0
        ratio = 1.0 if value == 0 else 0.0
    return min(max(ratio, 0.0), 1.0)


def metric_reward(metric: MetricSpec, value: float, reference: float | None) -> float:
    """ST-Bench training reward of one reported metric value, in [0, 1].

    `s = 0.10 s_sanity + 0.40 s_target + 0.50 s_reference`, with s_sanity = finite and in the valid
    range, s_target = target met, s_reference = value/reference clipped to [0, 1] (reference/value
    for lower-is-better). A value of 0 against a non-zero reference scores 0. Without a reference
    (None, or 0 for a higher-is-better metric) the weights are 0.40 sanity / 0.60 target.

    Args:
        metric: The metric's spec (target, valid range).
        value: The reported value.
        reference: The reference value, or None when missing: the gold in `score@<agent>`'s reward,
            the one-turn baseline's value on the query for an optimiser (stages/optimize/reward.py).

    Raises:
        ValueError: If the reference is not finite.
    """
    if reference is not None and not math.isfinite(reference):
        raise ValueError(f"metric {metric.name}: non-finite reference {reference!r}")
    sane = float(in_valid_range(value, metric.valid_range))
    met = float(target_satisfied(metric, value))
    lower = lower_is_better(metric)
    if reference is None or (reference == 0 and not lower):
        return WEIGHTS_NO_REFERENCE["sanity"] * sane + WEIGHTS_NO_REFERENCE["target"] * met
    if value == 0 and reference != 0:
        return 0.0
    closeness = _reference_term(value, reference, lower) if sane else 0.0
    return WEIGHTS["sanity"] * sane + WEIGHTS["target"] * met + WEIGHTS["reference"] * closeness


def _close(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=FLOAT_SLACK, abs_tol=1e-12)


def _at_most(x: float, y: float) -> bool:
    return x <= y or _close(x, y)


def _below(x: float, y: float) -> bool:
    return x < y and not _close(x, y)


COMPARATORS: dict[str, Callable[[float, float, float], bool]] = {
    "=": lambda answer, gold, tol: _at_most(abs(answer - gold), tol),
    ">=": lambda answer, gold, tol: _at_most(gold - tol, answer),
    ">": lambda answer, gold, tol: _below(gold - tol, answer),
    "<=": lambda answer, gold, tol: _at_most(answer, gold + tol),
    "<": lambda answer, gold, tol: _below(answer, gold + tol),
}


def _number_matches(spec: HypothesisSpec, answer: Any, gold: Any) -> bool:
    a, g = as_finite(answer), as_finite(gold)
    if a is None or g is None or not in_valid_range(a, spec.valid_range):
        return False
    tol = max(spec.abs_tol, spec.rel_tol * abs(g))
    return COMPARATORS[spec.comparator](a, g, tol)


def _boolean_matches(spec: HypothesisSpec, answer: Any, gold: Any) -> bool:
    return isinstance(answer, bool) and isinstance(gold, bool) and answer == gold


def _category_matches(spec: HypothesisSpec, answer: Any, gold: Any) -> bool:
    if not isinstance(answer, str) or not isinstance(gold, str):
        return False
    return answer.strip().casefold() == gold.strip().casefold()


def _item_matches(spec: HypothesisSpec, answer: Any, gold: Any) -> bool:
    if isinstance(gold, str):
        return _category_matches(spec, answer, gold)
    return _number_matches(spec, answer, gold)


def _list_matches(spec: HypothesisSpec, answer: Any, gold: Any) -> bool:
    if not isinstance(answer, list) or not isinstance(gold, list) or len(answer) != len(gold):
        return False
    return all(_item_matches(spec, a, g) for a, g in zip(answer, gold, strict=True))


def _coordinates_matches(spec: HypothesisSpec, answer: Any, gold: Any) -> bool:
    if not isinstance(answer, list) or not isinstance(gold, list):
        return False
    pairs = [(as_finite(a), as_finite(g)) for a, g in zip(answer, gold, strict=False)]
    if len(answer) != 2 or len(gold) != 2 or any(a is None or g is None for a, g in pairs):
        return False
    tol = spec.abs_tol or DEFAULT_COORDINATE_TOL_DEG
    (lat, gold_lat), (lon, gold_lon) = pairs
    lon_gap = abs(lon - gold_lon) % 360.0
    return _at_most(abs(lat - gold_lat), tol) and _at_most(min(lon_gap, 360.0 - lon_gap), tol)


MATCHERS: dict[str, Callable[[HypothesisSpec, Any, Any], bool]] = {
    "number": _number_matches,
    "boolean": _boolean_matches,
    "category": _category_matches,
    "list": _list_matches,
    "coordinates": _coordinates_matches,
}


def hypothesis_matches(spec: HypothesisSpec, answer: Any, gold: Any) -> bool:
    """MoSciBench exact match of a parsed answer against the gold value.

    Numbers: tolerance `max(abs_tol, rel_tol * |gold|)` applied through the comparator (`=`:
    `|a - g| <= tol`; `>=`: `a >= g - tol`; `>`: `a > g - tol`; `<=`: `a <= g + tol`; `<`:
    `a < g + tol`). Booleans exact; categories equal after strip and casefold; lists of the same
    length elementwise; coordinates `[lat, lon]` each within `abs_tol` degrees (0.01 when 0).
    """
    return MATCHERS[spec.format](spec, answer, gold)
