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
from control_annotator import driver_fit, label_series, lag1

DRIVEN, PERSISTENT, NOISE = 2, 1, 0


def kind(group: pd.DataFrame) -> int:
    """The kind label of one series."""
    if driver_fit(group)[2] < 1e-6:
        return DRIVEN
    y = group["y"].dropna().to_numpy(dtype=float)
    return PERSISTENT if lag1(y) > 4 / np.sqrt(len(y)) else NOISE


def main() -> None:
    """Name each series' kind; write the artifact and answer.json."""
    label_series(kind, "kind")


if __name__ == "__main__":
    main()
