"""Annotator reproduction: cluster basins by hydrological signatures computed from the scope's data.

Method (the gold):
1. Read the scope block of `prompt.md` and keep only its basins and dates.
2. Per basin, compute streamflow signatures in the spirit of Addor et al. (2018) and Jehn et al.
   (2020) from the days with observed streamflow: mean flow, runoff ratio (mean flow / mean
   precipitation over the same days), baseflow index (Lyne-Hollick digital filter, alpha = 0.925,
   applied to the series with gaps linearly interpolated), slope of the flow duration curve between
   its 33rd and 66th percentiles (log space), high-flow (Q95) and low-flow (Q5) quantiles
   normalized by mean flow, frequency of high-flow days (> 9 x median flow), and the mean
   half-flow date (day of the water year, starting 1 October, by which half the water-year flow
   has passed; water years with >= 90 % observed days).
3. Transform skewed signatures (log of mean flow), drop signatures that are constant across the
   scope, standardize to zero mean and unit variance, and project onto the two leading principal
   components (the dominant gradients of hydrological behaviour; the rest is mostly noise at
   these sample sizes).
4. k-means (k-means++, 20 restarts, fixed seed) in that plane for k = 2 .. min(8, n_basins // 2);
   keep the k with the highest mean silhouette coefficient (Euclidean, same plane).

Deterministic: fixed `random_state`; k-means runs single-threaded under OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from camels_annotator import read_scope, read_timeseries
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score

LYNE_HOLLICK_ALPHA = 0.925
MIN_OBSERVED_DAYS = 365


def baseflow_index(flow: np.ndarray) -> float:
    """Lyne-Hollick one-parameter filter, one forward pass; baseflow / total flow."""
    quick = np.zeros(len(flow))
    for t in range(1, len(flow)):
        quick[t] = LYNE_HOLLICK_ALPHA * quick[t - 1] + (1 + LYNE_HOLLICK_ALPHA) / 2 * (
            flow[t] - flow[t - 1]
        )
        quick[t] = min(max(quick[t], 0.0), flow[t])
    total = flow.sum()
    return float((flow - quick).sum() / total) if total > 0 else 1.0


def half_flow_date(basin: pd.DataFrame) -> float:
    """Mean over complete water years of the day on which cumulative flow passes half the total."""
    water_year = basin["date"].dt.year + (basin["date"].dt.month >= 10).astype(int)
    days = []
    for _, year in basin.groupby(water_year, sort=True):
        flow = year["qobs_mm_d"]
        if flow.notna().mean() < 0.9 or len(year) < 330 or flow.sum() <= 0:
            continue
        cumulative = flow.fillna(0.0).cumsum().to_numpy()
        days.append(float(np.argmax(cumulative >= cumulative[-1] / 2) + 1))
    return float(np.mean(days)) if days else np.nan


def signatures(basin: pd.DataFrame) -> dict[str, float] | None:
    """Signatures of one basin from its observed days, or None with too few observations."""
    observed = basin["qobs_mm_d"].notna()
    if observed.sum() < MIN_OBSERVED_DAYS:
        return None
    flow = basin.loc[observed, "qobs_mm_d"].to_numpy(dtype=float)
    prcp = basin.loc[observed, "prcp_mm_d"].to_numpy(dtype=float)
    mean, median = flow.mean(), np.median(flow)
    filled = basin["qobs_mm_d"].interpolate(limit_direction="both").to_numpy(dtype=float)
    q33, q66 = np.quantile(flow, [0.33, 0.66])
    floor = max(1e-3, 1e-3 * mean)  # keeps the logs finite in ephemeral streams
    return {
        "log_q_mean": np.log(max(mean, floor)),
        "runoff_ratio": mean / np.nanmean(prcp) if np.nanmean(prcp) > 0 else np.nan,
        "baseflow_index": baseflow_index(filled),
        "slope_fdc": (np.log(max(q66, floor)) - np.log(max(q33, floor))) / (0.66 - 0.33),
        "q95_norm": np.quantile(flow, 0.95) / mean if mean > 0 else np.nan,
        "q5_norm": np.quantile(flow, 0.05) / mean if mean > 0 else np.nan,
        "high_q_freq": float(np.mean(flow > 9 * median)) if median > 0 else np.nan,
        "half_flow_date": half_flow_date(basin),
    }


def main() -> None:
    """Cluster the scope's basins and write work/answer.json."""
    scope = read_scope(Path("prompt.md"))
    frame = read_timeseries(Path("data"), scope, ["prcp_mm_d", "qobs_mm_d"])
    table = pd.DataFrame(
        {
            gauge: sig
            for gauge, basin in frame.groupby(scope["entity_key"], sort=True)
            if (sig := signatures(basin.reset_index(drop=True))) is not None
        }
    ).T
    table = table.dropna(axis=1, thresh=int(0.8 * len(table)))
    table = table.fillna(table.median())
    table = table.loc[:, table.std(ddof=0) > 1e-9]
    if len(table) < 4 or table.shape[1] == 0:
        raise SystemExit(f"only {len(table)} basins with usable signatures")
    standardized = ((table - table.mean()) / table.std(ddof=0)).to_numpy()
    features = PCA(n_components=min(2, standardized.shape[1]), random_state=0).fit_transform(
        standardized
    )
    best = None
    for k in range(2, max(2, min(8, len(table) // 2)) + 1):
        labels = KMeans(n_clusters=k, n_init=20, random_state=0).fit_predict(features)
        if len(set(labels)) < 2:
            continue
        score = float(silhouette_score(features, labels))
        if best is None or score > best[0] + 1e-12:
            best = (score, k)
    if best is None:
        raise SystemExit("no partition with at least two clusters")
    metrics = {"silhouette": round(best[0], 6), "n_clusters": float(best[1])}
    Path("work").mkdir(exist_ok=True)
    Path("work/answer.json").write_text(json.dumps({"metrics": metrics}, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
