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
from control_annotator import DRIVERS, LAGGED, label_series, with_lags


def first_to_enter(group: pd.DataFrame) -> int:
    """1-based index of the covariate whose day or previous day correlates most with y (absolute)."""
    rows = group.dropna(subset=["y", *LAGGED])
    correlations = [abs(np.corrcoef(rows[x], rows["y"])[0, 1]) for x in LAGGED]
    return int(np.argmax(correlations)) % len(DRIVERS) + 1


def main() -> None:
    """Name each series' dominant covariate; write the artifact and answer.json."""
    label_series(first_to_enter, "dominant", prepare=with_lags)


if __name__ == "__main__":
    main()
