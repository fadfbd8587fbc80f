"""A per-entity feature space of one variable: where a partition is graded (silhouette).

The `profiles` truth of a clustering task names some of these features; the prompt states their
definitions (`stages.catalog.PROFILE_DEFINITIONS`), computed per entity over the observed (non-null) values of the
variable in the scope, in time order:

- `mean`: the mean;
- `std`: the population standard deviation;
- `cv`: std / |mean| (0 when the mean is 0);
- `q10`, `q90`: the 10 % and 90 % quantiles (linear interpolation);
- `lag1`: the Pearson correlation of consecutive observed values (0 for a constant series);
- `seasonal_amplitude`: the largest minus the smallest of the 12 calendar-month means (months
  without data left out);
- `trend`: the least-squares slope of the values on time, per year.

Each feature is then standardised across the scope's entities (z-score, population sd); a feature
with zero spread becomes 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stages.catalog import PROFILE_DEFINITIONS

MIN_OBSERVED = 10
SECONDS_PER_YEAR = 365.25 * 86400


def _lag1(values: np.ndarray) -> float:
    a, b = values[:-1], values[1:]
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def _trend(times: pd.Series, values: np.ndarray) -> float:
    years = (times - times.iloc[0]).dt.total_seconds().to_numpy() / SECONDS_PER_YEAR
    if np.all(years == years[0]):
        return 0.0
    return float(np.polyfit(years, values, 1)[0])


def entity_profile(times: pd.Series, values: pd.Series, features: list[str]) -> dict[str, float]:
    """The raw (unstandardised) features of one entity's series, in time order."""
    observed = values.notna().to_numpy()
    x, t = values[observed].to_numpy(dtype=float), times[observed].reset_index(drop=True)
    mean, std = float(x.mean()), float(x.std())
    monthly = pd.Series(x).groupby(t.dt.month.to_numpy()).mean()
    every = {
        "mean": lambda: mean,
        "std": lambda: std,
        "cv": lambda: std / abs(mean) if mean != 0 else 0.0,
        "q10": lambda: float(np.quantile(x, 0.1)),
        "q90": lambda: float(np.quantile(x, 0.9)),
        "lag1": lambda: _lag1(x),
        "seasonal_amplitude": lambda: float(monthly.max() - monthly.min()),
        "trend": lambda: _trend(t, x),
    }
    return {name: every[name]() for name in features}


def profile_space(frame: pd.DataFrame, key: str, time: str, column: str,
                  features: list[str]) -> pd.DataFrame:
    """Standardised features, one row per entity (sorted), indexed by the entity key.

    An entity with fewer than 10 observed values has no profile and is left out (it owes no label).

    Raises:
        ValueError: If a feature is unknown or fewer than 2 entities have a profile.
    """
    unknown = sorted(set(features) - set(PROFILE_DEFINITIONS))
    if unknown or not features:
        raise ValueError(f"unknown or no profile features {unknown}; known: {list(PROFILE_DEFINITIONS)}")
    rows = {}
    for entity, group in frame.sort_values([key, time]).groupby(key, sort=True):
        if group[column].notna().sum() < MIN_OBSERVED:
            continue
        rows[str(entity)] = entity_profile(group[time].reset_index(drop=True),
                                           group[column].reset_index(drop=True), features)
    if len(rows) < 2:
        raise ValueError(f"fewer than 2 entities have {MIN_OBSERVED} observed values of {column}")
    raw = pd.DataFrame.from_dict(rows, orient="index")[list(features)]
    spread = raw.std(ddof=0)
    scaled = (raw - raw.mean()) / spread.where(spread > 0, 1.0)
    scaled.index.name = key
    return scaled
