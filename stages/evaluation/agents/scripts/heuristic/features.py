"""Lagged, antecedent and seasonal features of one entity's drivers (never of the target).

A response to weather-like drivers depends on what happened before: the features of a day are each
driver's value, its values one and two days before, exponentially weighted running means over
spans from days to a year (antecedent conditions, storage), the running mean of its decreases
(a store that empties, such as a snowpack, releases water) and the season (the first two
harmonics of the day of year). Gaps in a driver are interpolated in time first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SPANS = (3, 7, 15, 30, 60, 120, 240, 365)
DECREASE_SPANS = (1, 5, 20)
LAGS = (1, 2)


def driver_features(rows: pd.DataFrame, drivers: list[str], time: str) -> pd.DataFrame:
    """Feature matrix of one entity's rows (time order), one row per input row."""
    columns: dict[str, np.ndarray] = {}
    for name in drivers:
        series = rows[name].astype(float).interpolate(limit_direction="both")
        series = series.fillna(0.0)
        columns[name] = series.to_numpy()
        for lag in LAGS:
            columns[f"{name}_lag{lag}"] = series.shift(lag).bfill().to_numpy()
        for span in SPANS:
            columns[f"{name}_ewm{span}"] = series.ewm(span=span, adjust=True).mean().to_numpy()
        decrease = (-series.diff()).clip(lower=0.0).fillna(0.0)
        for span in DECREASE_SPANS:
            columns[f"{name}_down{span}"] = decrease.ewm(span=span, adjust=True).mean().to_numpy()
    columns.update(seasonal_features(pd.to_datetime(rows[time])))
    return pd.DataFrame(columns, index=rows.index)


def seasonal_features(times: pd.Series) -> dict[str, np.ndarray]:
    """Sine and cosine of the first two harmonics of the day of year."""
    angle = 2 * np.pi * times.dt.dayofyear.to_numpy(dtype=float) / 365.25
    return {"season_sin1": np.sin(angle), "season_cos1": np.cos(angle),
            "season_sin2": np.sin(2 * angle), "season_cos2": np.cos(2 * angle)}
