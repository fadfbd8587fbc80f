"""Annotator reproduction: the dominant covariate of each series, as the first to enter its lasso path.

Method (the gold; the prompt leaves the method to the agent):
1. Per series, standardise y and x1..x5, and x1..x5 of the previous day (a covariate may act with
   a delay), over the observed days that have a previous day.
2. The first of those ten columns to enter the lasso path is the one with the largest absolute
   correlation with y (the path starts where the penalty equals the largest |x_j' y| / n); its
   covariate, whatever its delay, is the answer.
3. Estimate of the adjusted Rand index: the answers from the first and the second half of the
   period, compared with each other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from control_annotator import DRIVERS, LAGGED, adjusted_rand, read_query, with_lags, write_outputs


def first_to_enter(group: pd.DataFrame) -> int:
    """1-based index of the covariate whose day or previous day correlates most with y (absolute)."""
    rows = group.dropna(subset=["y", *LAGGED])
    correlations = [abs(np.corrcoef(rows[x], rows["y"])[0, 1]) for x in LAGGED]
    return int(np.argmax(correlations)) % len(DRIVERS) + 1


def answers(series: pd.DataFrame, key: str) -> np.ndarray:
    return np.asarray([first_to_enter(group) for _, group in with_lags(series, key).groupby(key, sort=True)])


def main() -> None:
    scope, artifact, series, _ = read_query()
    key = scope["entity_key"]
    middle = series["date"].min() + (series["date"].max() - series["date"].min()) / 2
    halves = [answers(part, key) for part in (series[series["date"] <= middle], series[series["date"] > middle])]
    out = pd.DataFrame({key: sorted(series[key].unique()), "dominant": answers(series, key)})
    write_outputs(out, artifact, {"adjusted_rand": adjusted_rand(*halves)})


if __name__ == "__main__":
    main()
