"""Goodness-of-fit measures for internal validation, and which one each reported metric names.

The answer-format block lists metrics by name and description only. A metric's function is the
first known measure named in its name or description (NSE, KGE, RMSE, MAE, bias, R², silhouette);
its aggregation is the median (or mean) of per-entity values when the description says so, else
pooled; its artifact column is the value column sharing the most words with the metric's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np


def nse(obs: np.ndarray, sim: np.ndarray) -> float:
    """Nash-Sutcliffe efficiency 1 - sum((sim - obs)^2) / sum((obs - mean(obs))^2)."""
    spread = np.sum((obs - obs.mean()) ** 2)
    return float(1.0 - np.sum((sim - obs) ** 2) / spread) if spread > 0 else float("nan")


def kge(obs: np.ndarray, sim: np.ndarray) -> float:
    """Kling-Gupta efficiency 1 - sqrt((r - 1)^2 + (alpha - 1)^2 + (beta - 1)^2)."""
    if obs.std() == 0 or obs.mean() == 0:
        return float("nan")
    r = np.corrcoef(obs, sim)[0, 1] if sim.std() > 0 else 0.0
    alpha, beta = sim.std() / obs.std(), sim.mean() / obs.mean()
    return float(1.0 - np.sqrt((r - 1) ** 2 + (alpha - 1) ** 2 + (beta - 1) ** 2))


def rmse(obs: np.ndarray, sim: np.ndarray) -> float:
    """Root mean square error."""
    return float(np.sqrt(np.mean((sim - obs) ** 2)))


def mae(obs: np.ndarray, sim: np.ndarray) -> float:
    """Mean absolute error."""
    return float(np.mean(np.abs(sim - obs)))


def bias(obs: np.ndarray, sim: np.ndarray) -> float:
    """Mean error sim - obs."""
    return float(np.mean(sim - obs))


def r2(obs: np.ndarray, sim: np.ndarray) -> float:
    """Squared Pearson correlation."""
    return float(np.corrcoef(obs, sim)[0, 1] ** 2) if obs.std() > 0 and sim.std() > 0 else float("nan")


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
