"""Annotator reproduction: classify each series as covariate-driven, persistent or white noise.

Method (the gold; the prompt leaves the method to the agent):
1. Covariate-driven: the F-test of the least-squares regression of y on x1..x5 rejects "no
   effect" at p < 1e-6.
2. Otherwise persistent: the lag-1 autocorrelation of y exceeds 4 / sqrt(n) (n observed days),
   four standard errors under white noise.
3. Otherwise white noise.
4. Estimate of the adjusted Rand index: the labels of the first and the second half of the
   period, compared with each other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from control_annotator import adjusted_rand, driver_fit, lag1, read_query, write_outputs

DRIVEN, PERSISTENT, NOISE = 2, 1, 0


def kind(group: pd.DataFrame) -> int:
    """The kind label of one series."""
    if driver_fit(group)[2] < 1e-6:
        return DRIVEN
    y = group["y"].dropna().to_numpy(dtype=float)
    return PERSISTENT if lag1(y) > 4 / np.sqrt(len(y)) else NOISE


def kinds(series: pd.DataFrame, key: str) -> np.ndarray:
    return np.asarray([kind(group) for _, group in series.groupby(key, sort=True)])


def main() -> None:
    scope, artifact, series, _ = read_query()
    key = scope["entity_key"]
    middle = series["date"].min() + (series["date"].max() - series["date"].min()) / 2
    halves = [kinds(part, key) for part in (series[series["date"] <= middle], series[series["date"] > middle])]
    out = pd.DataFrame({key: sorted(series[key].unique()), "kind": kinds(series, key)})
    write_outputs(out, artifact, {"adjusted_rand": adjusted_rand(*halves)})


if __name__ == "__main__":
    main()
