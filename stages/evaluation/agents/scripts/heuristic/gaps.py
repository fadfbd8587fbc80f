"""Gap geometry and the per-day signals a gap filler uses: edges, interpolation, donor anomalies.

All functions work on one entity's days in time order (arrays of equal length), `available` the
days whose value is known. A missing day's edges are the nearest available days before and after
it; the baseline fill is the straight line between the values at the edges (held flat past the
first or last available day).
"""

from __future__ import annotations

import numpy as np


def edges(available: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of the nearest available day at or before / at or after each day (-1 / n if none)."""
    n, days = len(available), np.arange(len(available))
    before = np.maximum.accumulate(np.where(available, days, -1))
    after = np.minimum.accumulate(np.where(available, days, n)[::-1])[::-1]
    return before, after


def interpolate(values: np.ndarray, before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Straight line between the values at the edges; the one edge's value where only one exists."""
    n = len(values)
    days = np.arange(n)
    has_before, has_after = before >= 0, after < n
    left = np.where(has_before, values[np.clip(before, 0, n - 1)], np.nan)
    right = np.where(has_after, values[np.clip(after, 0, n - 1)], np.nan)
    left, right = np.where(has_before, left, right), np.where(has_after, right, left)
    both = has_before & has_after
    span = np.maximum(np.where(both, after - before, 1), 1).astype(float)
    weight = np.where(both, (days - before) / span, 0.0)
    return np.nan_to_num(left + weight * (right - left))


def pseudo_gaps(available: np.ndarray, share: float, run_days: tuple[int, int],
                rng: np.random.Generator) -> np.ndarray:
    """Runs of `run_days` days laid over the series until `share` of the available days are hidden."""
    hidden = np.zeros(len(available), dtype=bool)
    wanted = int(share * available.sum())
    for _ in range(10_000):
        if (hidden & available).sum() >= wanted:
            break
        length = int(rng.integers(run_days[0], run_days[1] + 1))
        first = int(rng.integers(0, max(len(available) - length, 0) + 1))
        hidden[first:first + length] = True
    return hidden & available


def donor_weights(values: np.ndarray, available: np.ndarray, top: int) -> np.ndarray:
    """Entities x entities weights: per entity its `top` donors by correlation of daily changes.

    The weight of a donor is its correlation (positive ones only); an entity is not its own donor.
    """
    n_entities = values.shape[1]
    change = np.where(available[1:] & available[:-1], np.diff(values, axis=0), np.nan)
    weights = np.zeros((n_entities, n_entities))
    for target in range(n_entities):
        scores = np.zeros(n_entities)
        for donor in range(n_entities):
            both = ~np.isnan(change[:, target]) & ~np.isnan(change[:, donor])
            if donor != target and both.sum() > 30 and change[both, donor].std() > 0 \
                    and change[both, target].std() > 0:
                scores[donor] = max(np.corrcoef(change[both, target], change[both, donor])[0, 1], 0.0)
        best = np.argsort(-scores, kind="stable")[:top]
        weights[target, best] = scores[best]
    return weights


def donor_anomaly(values: np.ndarray, available: np.ndarray, weights: np.ndarray,
                  before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Weighted mean over donors of (donor value - donor's straight line between the edges).

    Edges are the target's; a donor counts on a day when it is known on that day and at both edges.
    Days no donor covers get 0.
    """
    n = values.shape[0]
    at_before, at_after = np.clip(before, 0, n - 1), np.clip(after, 0, n - 1)
    total, weight = np.zeros(n), np.zeros(n)
    for donor in np.flatnonzero(weights > 0):
        known = available[:, donor]
        ok = known & known[at_before] & known[at_after]
        line = interpolate(np.where(known, values[:, donor], 0.0), before, after)
        total += np.where(ok, weights[donor] * (values[:, donor] - line), 0.0)
        weight += np.where(ok, weights[donor], 0.0)
    return np.where(weight > 0, total / np.maximum(weight, 1e-12), 0.0)


def since_edge(values: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Sum of `values` over the days after the edge before each day, up to and including it."""
    days = np.arange(len(values))
    cumulative = np.concatenate([[0.0], np.cumsum(values)])
    return cumulative[days + 1] - cumulative[np.clip(before, 0, len(values) - 1) + 1]
