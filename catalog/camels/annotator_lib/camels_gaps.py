"""Gap filling of daily streamflow: pseudo-gaps, gap edges, donor anomalies and gap features.

Shared by the camels gap-filling annotators (see camels-gap-filling/reproduce.py for the method).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from camels_annotator import FORCING
from sklearn.ensemble import HistGradientBoostingRegressor

COLUMNS = [*FORCING, "swe_mm"]
RUN_DAYS = (5, 30)


def pseudo_gaps(available: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    """Runs of 5-30 days over available days until `share` of them are covered."""
    hidden = np.zeros(len(available), dtype=bool)
    target = int(share * available.sum())
    while (hidden & available).sum() < target:
        length = int(rng.integers(RUN_DAYS[0], RUN_DAYS[1] + 1))
        first = int(rng.integers(0, max(len(available) - length, 0) + 1))
        hidden[first:first + length] = True
    return hidden & available


def edges(available: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of the nearest available day at or before / at or after each day (-1 / n if none)."""
    n, days = len(available), np.arange(len(available))
    prev = np.maximum.accumulate(np.where(available, days, -1))
    nxt = np.minimum.accumulate(np.where(available, days, n)[::-1])[::-1]
    return prev, nxt


def interpolate(values: np.ndarray, prev: np.ndarray, nxt: np.ndarray) -> np.ndarray:
    """Linear interpolation of `values` between the edge days (ends held)."""
    n = len(values)
    days = np.arange(n)
    has_prev, has_next = prev >= 0, nxt < n
    y_prev = np.where(has_prev, values[np.clip(prev, 0, n - 1)], np.nan)
    y_next = np.where(has_next, values[np.clip(nxt, 0, n - 1)], np.nan)
    y_prev, y_next = np.where(has_prev, y_prev, y_next), np.where(has_next, y_next, y_prev)
    span = np.where(has_prev & has_next, nxt - prev, 1).astype(float)
    weight = np.where(has_prev & has_next, (days - prev) / span, 0.0)
    return y_prev + weight * (y_next - y_prev)


def donor_anomaly(logs: np.ndarray, avail: np.ndarray, donors: list[int], prev, nxt) -> np.ndarray:
    """Mean over donors of (log flow - the donor's interpolation between the target's edges)."""
    n = logs.shape[0]
    total, count = np.zeros(n), np.zeros(n)
    ip, inx = np.clip(prev, 0, n - 1), np.clip(nxt, 0, n - 1)
    for d in donors:
        ok = avail[:, d] & avail[ip, d] & avail[inx, d]
        line = interpolate(np.where(avail[:, d], logs[:, d], 0.0), prev, nxt)
        total += np.where(ok, logs[:, d] - line, 0.0)
        count += ok
    return np.where(count > 0, total / np.maximum(count, 1), 0.0)


def simulate(features: pd.DataFrame, log_q: np.ndarray, avail: np.ndarray) -> np.ndarray:
    """The basin model's log-flow simulation of every day, fitted on the available days."""
    model = HistGradientBoostingRegressor(max_iter=60, learning_rate=0.1, max_leaf_nodes=12,
                                          min_samples_leaf=20, l2_regularization=1.0,
                                          early_stopping=False, random_state=0)
    return model.fit(features[avail], log_q[avail]).predict(features)


def features(b: int, avail_b: np.ndarray, logs, avail, same_region, forcing, sim) -> pd.DataFrame:
    """Features of every day of basin `b` given which of its days are available."""
    n = len(avail_b)
    prev, nxt = edges(avail_b)
    days = np.arange(n)
    prcp, tmean, swe, doy = forcing
    at_prev = np.clip(prev, 0, n - 1)

    def since_edge(values: np.ndarray) -> np.ndarray:
        cum = np.concatenate([[0.0], np.cumsum(values)])
        return cum[days + 1] - cum[at_prev + 1]

    others = [d for d in range(logs.shape[1]) if d != b]
    line = interpolate(np.where(avail_b, logs[:, b], 0.0), prev, nxt)
    model_line = sim + interpolate(np.where(avail_b, logs[:, b] - sim, 0.0), prev, nxt)
    return pd.DataFrame({
        "baseline": line,
        "model_line": model_line - line,
        "model_sim": sim - line,
        "y_prev": np.where(prev >= 0, logs[at_prev, b], line),
        "slope": line - np.where(prev >= 0, logs[at_prev, b], line),
        "season_sin": np.sin(2 * np.pi * doy / 365.25), "season_cos": np.cos(2 * np.pi * doy / 365.25),
        "degree_days_since": since_edge(np.maximum(tmean[:, b], 0.0)),
        "swe": swe[:, b], "swe_change": swe[:, b] - swe[at_prev, b],
        "d_prev": np.minimum(days - prev, 60), "d_next": np.minimum(nxt - days, 60),
        "gap": np.minimum(nxt - prev, 120),
        "donor_region": donor_anomaly(logs, avail, [d for d in others if same_region[b, d]], prev, nxt),
        "donor_all": donor_anomaly(logs, avail, others, prev, nxt),
        "prcp_since": since_edge(prcp[:, b]), "prcp_t": prcp[:, b],
        "prcp_3d": pd.Series(prcp[:, b]).rolling(3, min_periods=1).sum().to_numpy(),
        "tmean_t": tmean[:, b],
    })
