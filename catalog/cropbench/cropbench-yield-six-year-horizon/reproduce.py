"""Annotator reproduction: year-to-year county maize yields over a long (30 %) test period.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Season features per county-year from daily tmin, tmax, precipitation and VPD, placed by the
   crop calendar: degree days, extreme heat above 30 degC, days per tmax band, season and silking
   rain, silking-window VPD, spring warmth and rain (`cropbench_annotator.season_features`).
   The heat and dryness terms are also given a linear interaction with the year: the damage per
   unit of heat or dry air may change as yields rise.
3. Panel model on the training years: county fixed effects, linear trend, ridge on the
   county-demeaned features, boosted trees on its residuals; predict every owed row.
4. Report an estimate of the median NSE and pooled RMSE from the last 4 training years held out.
"""

from __future__ import annotations

from cropbench_annotator import YEAR, read_query
from cropbench_runs import panel_years_run, per_county, pooled
from metrics import nse, rmse

TARGET = "yield_t_ha"
TIME_VARYING = ("edd", "silking_vpd", "season_vpd", "silking_edd")


def main() -> None:
    """Predict the withheld test years; write the artifact and the estimates."""
    _, artifact, panel, _ = read_query(["tmin_c", "tmax_c", "prec_mm_d", "vpd_hpa"], TARGET)
    for name in TIME_VARYING:
        panel[f"{name}_x_year"] = panel[name] * (panel[YEAR] - 2000) / 10
    panel_years_run(panel, artifact, TARGET, {"median_nse": per_county(nse), "rmse_t_ha": pooled(rmse)}, check_years=4)


if __name__ == "__main__":
    main()
