"""Annotator reproduction: long gaps in county yield records rebuilt by transfer across counties.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Two-way additive model on the reported county-years: a county effect (its level) and a year
   effect shared by every county (what the other records say about the year), fitted by
   alternating means; plus a ridge of the remaining residual on the season features' own county-
   and-year anomalies (`cropbench_models.additive_fill`; features from the daily weather placed
   by the crop calendar).
3. Fill every null county-year. Report both metrics estimated on pseudo-gaps: one seeded run of
   5 reported years per county hidden, filled by the same model and scored.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from cropbench_annotator import KEY, feature_columns, owed_rows, read_query
from cropbench_models import additive_fill
from cropbench_runs import per_county, pooled, report
from metrics import nse, rmse

TARGET = "yield_t_ha"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d"]


def pseudo_gaps(panel: pd.DataFrame, observed: np.ndarray, length: int = 5) -> np.ndarray:
    """One seeded run of `length` reported years per county, hidden for the estimate."""
    rng = np.random.default_rng(0)
    hide = np.zeros(len(panel), dtype=bool)
    for _, rows in panel[observed].groupby(KEY).indices.items():
        index = np.flatnonzero(observed)[rows]
        if len(index) > length + 2:
            first = int(rng.integers(0, len(index) - length + 1))
            hide[index[first:first + length]] = True
    return hide


def main() -> None:
    """Fill the null county-years; write the artifact and the estimates."""
    scope, artifact, panel, _ = read_query(DAILY, TARGET)
    features = feature_columns(panel)
    owed = owed_rows(panel, TARGET)
    panel["yield_fill_t_ha"] = additive_fill(panel, ~owed, TARGET, features)
    hide = pseudo_gaps(panel, ~owed)
    held = panel[hide].assign(estimate=additive_fill(panel, ~owed & ~hide, TARGET, features)[hide])
    report(panel, owed, artifact, held, TARGET, {"rmse_t_ha": pooled(rmse), "median_nse": per_county(nse)})


if __name__ == "__main__":
    main()
