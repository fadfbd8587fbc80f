"""Shared helpers of the control annotator scripts: the query's data, features, partitions, OLS.

Mounted read-only beside each task's reproduce.py (at /agent) when the annotator runs in the
sandbox. It imports only what an agent's environment has (numpy, pandas, scikit-learn). Time
series methods (deterministic terms, autoregressions, forecasts, gap filling) are in
`control_series`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import read_artifact_spec, read_scope, write_answer, write_artifact
from metrics import adjusted_rand, silhouette  # the harness's own (stages/scoring/query/metrics.py)

DRIVERS = ["x1", "x2", "x3", "x4", "x5"]
LAGGED = [*DRIVERS, *(f"{x}_lag1" for x in DRIVERS)]  # the day's covariates and the day before's
ATTRIBUTES = ["a1", "a2", "a3"]
CLUSTER_COUNTS = range(2, 7)
STARTS, ITERATIONS = 10, 100


def read_query(workspace: Path = Path(".")) -> tuple[dict, dict, pd.DataFrame, pd.DataFrame]:
    """(scope, artifact block, timeseries, entities) of the query, cut to the scope, sorted by key and date."""
    prompt = workspace / "prompt.md"
    scope, artifact = read_scope(prompt), read_artifact_spec(prompt)
    key = scope["entity_key"]
    series = pd.read_parquet(workspace / "data" / "timeseries.parquet")
    series[key] = series[key].astype(str)
    series["date"] = pd.to_datetime(series["date"])
    inside = series[key].isin(scope["entities"]) & series["date"].between(
        pd.Timestamp(scope["start"]), pd.Timestamp(scope["end"]))
    series = series[inside].sort_values([key, "date"], kind="stable").reset_index(drop=True)
    entities = pd.read_parquet(workspace / "data" / "entities.parquet")
    entities[key] = entities[key].astype(str)
    entities = entities[entities[key].isin(scope["entities"])].sort_values(key).reset_index(drop=True)
    return scope, artifact, series, entities


def label_series(label: Callable[[pd.DataFrame], int], column: str,
                 prepare: Callable[[pd.DataFrame, str], pd.DataFrame] | None = None) -> None:
    """The per-series labelling tasks end to end: `label` every series of the query over its whole
    record (the artifact's `column`); the estimate is the adjusted Rand index of the labels that the
    first and the second half of the record give. `prepare(series, key)` (e.g. `with_lags`) runs on
    each record before it is split into series."""
    scope, artifact, series, _ = read_query()
    key = scope["entity_key"]

    def labels(part: pd.DataFrame) -> np.ndarray:
        part = part if prepare is None else prepare(part, key)
        return np.asarray([label(group) for _, group in part.groupby(key, sort=True)])

    middle = series["date"].min() + (series["date"].max() - series["date"].min()) / 2
    halves = [labels(part) for part in (series[series["date"] <= middle], series[series["date"] > middle])]
    write_artifact(pd.DataFrame({key: sorted(series[key].unique()), column: labels(series)}), artifact)
    write_answer(metrics={"adjusted_rand": adjusted_rand(*halves)})


def with_lags(series: pd.DataFrame, key: str) -> pd.DataFrame:
    """The series (sorted by key and date) with each covariate of the previous day beside the day's,
    as `x<i>_lag1`; null where the previous calendar day is not in the data (a series' first day)."""
    ordered = series.sort_values([key, "date"], kind="stable").reset_index(drop=True)
    previous = ordered.groupby(key)[DRIVERS].shift(1)
    follows = ordered.groupby(key)["date"].diff() == pd.Timedelta(days=1)
    previous[~follows.to_numpy()] = np.nan
    return ordered.assign(**{f"{x}_lag1": previous[x] for x in DRIVERS})


def zscore(frame: pd.DataFrame) -> pd.DataFrame:
    """Each column standardised across rows (population sd); a column without spread becomes 0."""
    x = frame.to_numpy(dtype=float)
    spread = x.std(axis=0)
    scaled = np.where(spread > 0, (x - x.mean(axis=0)) / np.where(spread > 0, spread, 1.0), 0.0)
    return pd.DataFrame(scaled, index=frame.index, columns=frame.columns)


def lag1(values: np.ndarray) -> float:
    """Pearson correlation of consecutive values (0 for a constant series)."""
    a, b = values[:-1], values[1:]
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def profile(dates: pd.Series, values: pd.Series) -> dict[str, float]:
    """Mean, population sd, lag-1 autocorrelation and calendar-month amplitude of the observed values."""
    observed = values.notna().to_numpy()
    x = values.to_numpy(dtype=float)[observed]
    months = pd.Series(x).groupby(dates.dt.month.to_numpy()[observed]).mean()
    return {"mean": float(x.mean()), "std": float(x.std()), "lag1": lag1(x),
            "seasonal_amplitude": float(months.max() - months.min())}


def profiles(series: pd.DataFrame, key: str, column: str) -> pd.DataFrame:
    """`profile` of `column` per entity, indexed by the entity key (sorted)."""
    rows = {entity: profile(group["date"], group[column]) for entity, group in series.groupby(key, sort=True)}
    return pd.DataFrame.from_dict(rows, orient="index").sort_index()


def kmeans(x: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Lloyd's k-means from `STARTS` seeded k-means++ starts; the labels of the lowest within-cluster sum of squares."""
    rng = np.random.default_rng(seed)
    best, best_inertia = np.zeros(len(x), dtype=int), np.inf
    for _ in range(STARTS):
        centres = [x[rng.integers(len(x))]]
        for _ in range(1, k):
            distance = np.min(((x[:, None, :] - np.asarray(centres)[None]) ** 2).sum(axis=2), axis=1)
            centres.append(x[rng.choice(len(x), p=distance / distance.sum())] if distance.sum() > 0
                           else x[rng.integers(len(x))])
        centres = np.asarray(centres)
        for _ in range(ITERATIONS):
            labels = ((x[:, None, :] - centres[None]) ** 2).sum(axis=2).argmin(axis=1)
            moved = np.asarray([x[labels == c].mean(axis=0) if np.any(labels == c) else centres[c]
                                for c in range(k)])
            if np.allclose(moved, centres):
                break
            centres = moved
        inertia = float(((x - centres[labels]) ** 2).sum())
        if inertia < best_inertia - 1e-12:
            best, best_inertia = labels, inertia
    return best


def best_partition(features: pd.DataFrame, counts: range = CLUSTER_COUNTS) -> tuple[np.ndarray, float]:
    """k-means labels with the k of highest mean silhouette, and that silhouette.

    Only k below the number of rows are tried; ties go to the smaller k.
    """
    x = features.to_numpy(dtype=float)
    best_labels, best_score = np.zeros(len(x), dtype=int), -np.inf
    for k in counts:
        if k >= len(x):
            break
        labels = kmeans(x, k)
        if len(set(labels)) < 2:
            continue
        score = silhouette(x, labels)
        if score > best_score + 1e-12:
            best_labels, best_score = labels, score
    return best_labels, best_score


def ols(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of y on [1, x] (intercept first)."""
    design = np.column_stack([np.ones(len(x)), x])
    return np.linalg.lstsq(design, y, rcond=None)[0]


def ols_predict(coefficients: np.ndarray, x: np.ndarray) -> np.ndarray:
    """[1, x] @ coefficients."""
    return np.column_stack([np.ones(len(x)), x]) @ coefficients


def driver_fit(group: pd.DataFrame, target: str = "y") -> tuple[np.ndarray, float, float]:
    """Per-entity OLS of the target on x1..x5 over its observed rows: coefficients, R² and F-test p-value."""
    from scipy.special import fdtrc  # only this helper needs it

    rows = group[group[target].notna()]
    x, y = rows[DRIVERS].to_numpy(dtype=float), rows[target].to_numpy(dtype=float)
    coefficients = ols(x, y)
    residual = y - ols_predict(coefficients, x)
    total = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum(residual ** 2)) / total if total > 0 else 0.0
    n, p = len(y), len(DRIVERS)
    f = (r2 / p) / max((1.0 - r2) / (n - p - 1), 1e-300)
    return coefficients, r2, float(fdtrc(p, n - p - 1, f))
