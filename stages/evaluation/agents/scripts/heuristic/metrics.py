"""Goodness-of-fit measures for internal validation, and which one each reported metric names.

The answer-format block lists metrics by name and description only. A metric's function is the
first known measure named in its name or description (NSE, KGE, RMSE, MAE, bias, R², silhouette);
its aggregation is the median (or mean) of per-entity values when the description says so, else
pooled; its artifact column is the value column sharing the most words with the metric's name.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

import numpy as np

# The harness's metric definitions (stages/scoring/query/metrics.py), bound read-only at this path
# in the sandbox (stages/evaluation/agents/builtin.py, `HEURISTIC_METRICS`); tests put their folder
# on sys.path themselves.
if "/scoring" not in sys.path:
    sys.path.append("/scoring")
import metrics as harness  # noqa: E402


def _defined(function: Callable[[np.ndarray, np.ndarray], float]) -> Callable[[np.ndarray, np.ndarray], float]:
    """The harness's metric, NaN where it is undefined (a candidate is then not judged by it)."""
    def measure(obs: np.ndarray, sim: np.ndarray) -> float:
        try:
            return function(obs, sim)
        except harness.MetricUndefined:
            return float("nan")
    return measure


nse, kge, rmse, mae, bias, r2 = map(_defined, (harness.nse, harness.kge, harness.rmse, harness.mae,
                                             harness.bias, harness.r2))


# Keyword -> measure, most specific first (an `nse` name must not match `rmse`).
MEASURES: tuple[tuple[str, Callable[[np.ndarray, np.ndarray], float]], ...] = (
    ("kling", kge), ("kge", kge), ("nash", nse), ("nse", nse), ("root mean square", rmse),
    ("rmse", rmse), ("absolute", mae), ("mae", mae), ("bias", bias), ("r2", r2), ("r²", r2),
)
WORD = re.compile(r"[a-z0-9]+")


def measure_of(metric: dict) -> Callable[[np.ndarray, np.ndarray], float] | None:
    """The measure a reported metric names (by its name first, then its description)."""
    for text in (metric["name"].lower(), (metric.get("description") or "").lower()):
        for word, function in MEASURES:
            if re.search(rf"(?<![a-z]){re.escape(word)}", text):
                return function
    return None


def aggregation_of(metric: dict) -> str:
    """`median`, `mean` (of per-entity values) or `pooled`, from the metric's description."""
    text = f"{metric['name']} {metric.get('description') or ''}".lower()
    if "pooled" in text:
        return "pooled"
    words = set(WORD.findall(text))
    return next((word for word in ("median", "mean") if word in words), "pooled")


def column_of(metric: dict, columns: list[str]) -> str:
    """The artifact column a metric grades: the one sharing the most words with its name."""
    words = set(WORD.findall(metric["name"].lower()))
    return max(columns, key=lambda c: (len(words & set(WORD.findall(c.lower()))), -columns.index(c)))


def estimate(metric: dict, pairs: dict[str, tuple[np.ndarray, np.ndarray]]) -> float | None:
    """A reported metric's value over per-entity (obs, sim) pairs of a validation set."""
    function = measure_of(metric)
    pairs = {e: (o, s) for e, (o, s) in pairs.items() if len(o) > 1}
    if function is None or not pairs:
        return None
    if aggregation_of(metric) == "pooled":
        obs = np.concatenate([o for o, _ in pairs.values()])
        sim = np.concatenate([s for _, s in pairs.values()])
        value = function(obs, sim)
    else:
        values = [function(o, s) for o, s in pairs.values()]
        values = [v for v in values if np.isfinite(v)]
        if not values:
            return None
        value = float(np.median(values) if aggregation_of(metric) == "median" else np.mean(values))
    return round(value, 6) if np.isfinite(value) else None
