"""Annotator reproduction: fill daily streamflow gaps, score the filler on artificially hidden days.

Method (the gold):
1. Read the scope block of `prompt.md` and keep only its basins and dates.
2. Per basin, hide 10 % (rounded) of the observed streamflow days of the scope, drawn uniformly
   without replacement with `numpy.random.default_rng(0)`; hidden values are never used for fitting.
3. Filler: in log space (log(q + eps), eps = 1 % of the basin's mean flow, at least 0.01 mm/d), a
   distance-weighted linear interpolation between the nearest available days before and after each
   missing day, corrected by a gradient-boosted regression tree ensemble pooled over the scope's
   basins. The regression learns the departure from interpolation from the neighbours' values and
   distances and the precipitation / temperature around the day. It is trained on the available
   days, each treated as if it were missing (its own value excluded from its features), so
   training and filling see the same kind of features.
4. Score on the hidden days: RMSE in mm/d over all hidden basin-days pooled, and the median across
   basins of the Nash-Sutcliffe efficiency on each basin's hidden days.

Deterministic: fixed seeds, no early stopping, single thread.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from camels_annotator import nse, read_scope, read_timeseries
from sklearn.ensemble import HistGradientBoostingRegressor

MASK_SHARE = 0.10
MASK_SEED = 0
FORCING = ["prcp_mm_d", "tmax_c", "tmin_c"]


def shifted(values: np.ndarray, lag: int) -> np.ndarray:
    """values[t - lag] (lag < 0 looks ahead), zero where the shift leaves the period."""
    return pd.Series(values).shift(lag, fill_value=0.0).to_numpy()


def neighbour_features(log_q: np.ndarray, available: np.ndarray, forcing: pd.DataFrame) -> dict:
    """Features of every day from the nearest *other* available days and the local forcing."""
    n = len(log_q)
    days = np.arange(n)
    have = np.flatnonzero(available)
    position = np.searchsorted(have, days, side="left")
    own = (position < len(have)) & (have[np.minimum(position, len(have) - 1)] == days)
    prev_pos = position - 1
    next_pos = np.where(own, position + 1, position)
    prev_ok, next_ok = prev_pos >= 0, next_pos < len(have)
    prev_day = np.where(prev_ok, have[np.clip(prev_pos, 0, len(have) - 1)], -1)
    next_day = np.where(next_ok, have[np.clip(next_pos, 0, len(have) - 1)], n)
    y_prev = np.where(prev_ok, log_q[np.clip(prev_day, 0, n - 1)], np.nan)
    y_next = np.where(next_ok, log_q[np.clip(next_day, 0, n - 1)], np.nan)
    y_prev = np.where(prev_ok, y_prev, y_next)
    y_next = np.where(next_ok, y_next, y_prev)
    d_prev, d_next = (days - prev_day).astype(float), (next_day - days).astype(float)
    interp = (d_next * y_prev + d_prev * y_next) / (d_prev + d_next)
    prcp = forcing["prcp_mm_d"].fillna(0.0).to_numpy()
    tmean = ((forcing["tmax_c"] + forcing["tmin_c"]) / 2).fillna(0.0).to_numpy()
    return {
        "interp": interp,
        "y_prev": y_prev,
        "y_next": y_next,
        "d_prev": np.minimum(d_prev, 60.0),
        "d_next": np.minimum(d_next, 60.0),
        "slope": y_next - y_prev,
        "prcp_t": prcp,
        "prcp_tm1": shifted(prcp, 1),
        "prcp_tm2": shifted(prcp, 2),
        "prcp_tp1": shifted(prcp, -1),
        "prcp_3d": pd.Series(prcp).rolling(3, min_periods=1).sum(),
        "tmean_t": tmean,
    }


def main() -> None:
    """Mask, fill, score, and write work/answer.json."""
    scope = read_scope(Path("prompt.md"))
    frame = read_timeseries(Path("data"), scope, [*FORCING, "qobs_mm_d"])
    rng = np.random.default_rng(MASK_SEED)
    train_parts, fill_parts = [], []
    for gauge, basin in frame.groupby(scope["entity_key"], sort=True):
        basin = basin.reset_index(drop=True)
        flow = basin["qobs_mm_d"].to_numpy(dtype=float)
        observed = np.flatnonzero(~np.isnan(flow))
        n_mask = int(round(MASK_SHARE * len(observed)))
        if n_mask < 2 or len(observed) - n_mask < 2:
            continue
        hidden = np.zeros(len(flow), dtype=bool)
        hidden[rng.choice(observed, size=n_mask, replace=False)] = True
        available = ~np.isnan(flow) & ~hidden
        eps = max(0.01, 0.01 * float(np.mean(flow[available])))
        log_q = np.log(np.where(available, flow, 0.0) + eps)
        features = pd.DataFrame(neighbour_features(log_q, available, basin))
        features["gauge"], features["eps"] = gauge, eps
        features["truth"], features["log_q"] = flow, log_q
        train_parts.append(features[available])
        fill_parts.append(features[hidden])
    if not fill_parts:
        raise SystemExit("no basin has enough observed streamflow to mask")
    train, fill = pd.concat(train_parts), pd.concat(fill_parts)
    columns = [c for c in train.columns if c not in ("gauge", "eps", "truth", "log_q")]
    model = HistGradientBoostingRegressor(
        max_iter=120,
        learning_rate=0.08,
        max_leaf_nodes=31,
        min_samples_leaf=40,
        early_stopping=False,
        random_state=0,
    ).fit(train[columns], train["log_q"] - train["interp"])
    fill["filled"] = np.clip(
        np.exp(fill["interp"] + model.predict(fill[columns])) - fill["eps"], 0.0, None
    )
    errors = fill["filled"] - fill["truth"]
    nses = [
        nse(group["truth"].to_numpy(), group["filled"].to_numpy())
        for _, group in fill.groupby("gauge", sort=True)
        if group["truth"].std(ddof=0) > 0
    ]
    metrics = {
        "rmse_mm_d": round(float(np.sqrt(np.mean(errors**2))), 6),
        "nse_masked": round(float(np.median(nses)), 6),
    }
    Path("work").mkdir(exist_ok=True)
    Path("work/answer.json").write_text(json.dumps({"metrics": metrics}, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
