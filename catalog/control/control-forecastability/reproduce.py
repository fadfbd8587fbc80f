"""Annotator reproduction: a model-based forecastability index and a BIC decision per series.

Method (the gold; the prompt leaves the method to the agent):
1. Per series, the BIC-best model of deterministic terms (constant; trend; annual harmonic) and
   AR(p) errors, p = 0..3 (`control_series.fit_series`).
2. Forecastable (1) when that model holds anything beyond the constant mean, else 0: the BIC
   penalty grows with log(n), so white noise is rarely called forecastable.
3. Estimate of the adjusted Rand index: the decisions of the first and the second half of the
   period, compared with each other.
"""

from __future__ import annotations

import pandas as pd
from control_annotator import label_series
from control_series import fit_series


def forecastable(group: pd.DataFrame) -> int:
    """1 when the BIC-best model of the series is more than its mean."""
    model = fit_series(group["date"], group["y"].to_numpy(dtype=float))
    return int(model.terms != ("const",) or len(model.phi) > 0)


def main() -> None:
    """Decide for each series whether it is forecastable; write the artifact and answer.json."""
    label_series(forecastable, "forecastable")


if __name__ == "__main__":
    main()
