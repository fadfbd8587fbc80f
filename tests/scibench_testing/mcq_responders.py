"""Data-free MCQ responders: each sees only the four option values and answers with a letter.

None opens the data or reads the question, so on a well-built MCQ none scores above chance (1/4).
Ties go to the first listed option (the options are shuffled, so that favours no perturbation).
`NUMERIC` holds the responders for numeric answers, `ENTITY` those for named answers; `RESIDUAL`
holds one that still beats chance, through the templates' perturbations rather than the options' build.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

LETTERS = "ABCD"
Responder = Callable[[list], str]


def _log_size(value: float) -> float:
    return math.log(max(abs(value), 1e-300))


def _closest(scores: list[float]) -> str:
    return LETTERS[min(range(len(scores)), key=scores.__getitem__)]


def log_central(options: list[float]) -> str:
    """The option whose log magnitude is closest to the median of the four log magnitudes."""
    sizes = sorted(map(_log_size, options))
    middle = (sizes[1] + sizes[2]) / 2
    return _closest([abs(_log_size(v) - middle) for v in options])


def log_midrange(options: list[float]) -> str:
    """The option whose log magnitude is closest to the middle of the smallest and the largest."""
    sizes = [_log_size(v) for v in options]
    middle = (min(sizes) + max(sizes)) / 2
    return _closest([abs(size - middle) for size in sizes])


def closest_to_mean(options: list[float]) -> str:
    """The option closest to the mean of all four."""
    mean = sum(options) / len(options)
    return _closest([abs(v - mean) for v in options])


def lower_median(options: list[float]) -> str:
    """The second smallest option."""
    return LETTERS[sorted(range(len(options)), key=options.__getitem__)[1]]


def upper_median(options: list[float]) -> str:
    """The second largest option."""
    return LETTERS[sorted(range(len(options)), key=options.__getitem__)[-2]]


def majority_sign(options: list[float]) -> str:
    """The first option with the most common sign."""
    signs = [math.copysign(1, v) for v in options]
    common = Counter(signs).most_common(1)[0][0]
    return LETTERS[signs.index(common)]


def odd_sign(options: list[float]) -> str:
    """The option whose sign no other option shares (the first option when none is alone)."""
    signs = [math.copysign(1, v) for v in options]
    alone = [i for i, sign in enumerate(signs) if signs.count(sign) == 1]
    return LETTERS[alone[0] if alone else 0]


def smallest_magnitude(options: list[float]) -> str:
    """The option of the smallest absolute value."""
    return _closest([abs(v) for v in options])


def largest_magnitude(options: list[float]) -> str:
    """The option of the largest absolute value."""
    return _closest([-abs(v) for v in options])


def geometric_centre(options: list[float]) -> str:
    """The option whose magnitude is closest (in log) to the geometric mean of the other three's."""
    sizes = [_log_size(v) for v in options]
    return _closest([abs(size - (sum(sizes) - size) / 3) for size in sizes])


def nearest_twin(options: list[float]) -> str:
    """The option with the nearest neighbour in log magnitude (a perturbation close to the answer gives it one)."""
    sizes = [_log_size(v) for v in options]
    return _closest([min(abs(size - other) for j, other in enumerate(sizes) if j != i) for i, size in enumerate(sizes)])


def fewest_digits(options: list[float]) -> str:
    """The option shown with the fewest digits at the MCQ's four significant digits (a round count stands out)."""
    return _closest([sum(c.isdigit() for c in f"{v:.4g}") for v in options])


def first_listed(options: list) -> str:
    """Always option A."""
    return "A"


def alphabetically_first(options: list[str]) -> str:
    """The option that sorts first."""
    return LETTERS[options.index(min(options))]


def alphabetically_last(options: list[str]) -> str:
    """The option that sorts last."""
    return LETTERS[options.index(max(options))]


NUMERIC: dict[str, Responder] = {
    "log_central": log_central, "log_midrange": log_midrange, "closest_to_mean": closest_to_mean,
    "lower_median": lower_median, "upper_median": upper_median, "majority_sign": majority_sign,
    "odd_sign": odd_sign, "smallest_magnitude": smallest_magnitude, "largest_magnitude": largest_magnitude,
    "geometric_centre": geometric_centre, "fewest_digits": fewest_digits, "first_listed": first_listed,
}
ENTITY: dict[str, Responder] = {
    "first_listed": first_listed, "alphabetically_first": alphabetically_first,
    "alphabetically_last": alphabetically_last,
}
# Not gated: a template's own close perturbation (a median beside the mean) pairs the answer with a near twin.
RESIDUAL: dict[str, Responder] = {"nearest_twin": nearest_twin}
