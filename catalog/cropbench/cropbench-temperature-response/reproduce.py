"""Annotator reproduction: the nonlinear response of maize yield to season temperatures.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Temperature exposure per county-year over the season placed by the crop calendar: days in
   each daily-maximum band (<20, 20-25, 25-29, 29-32, 32-35, >35 degC), growing degree days
   (10-30 degC) and degree days above 30 degC, season and silking-window means, spring warmth
   (`cropbench_annotator.season_features`; tmin and tmax only).
3. Panel model on the training years: county fixed effects, linear trend, ridge on the exposure
   (a piecewise-linear response), boosted trees on its residuals; predict every owed row.
4. Report an estimate of r2 and RMSE from the last 3 training years held out.
"""

from __future__ import annotations

from cropbench_annotator import read_query
from cropbench_runs import panel_years_run, pooled
from metrics import r2, rmse

TARGET = "yield_t_ha"


def main() -> None:
    """Predict the withheld test years from temperature; write the artifact and the estimates."""
    _, artifact, panel, _ = read_query(["tmin_c", "tmax_c"], TARGET)
    panel_years_run(panel, artifact, TARGET, {"r2": pooled(r2), "rmse_t_ha": pooled(rmse)})


if __name__ == "__main__":
    main()
