"""Annotator reproduction: county maize yields of the last test years from weather and soil.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Season features per county-year from the daily weather, placed by the county's crop calendar
   (degree days, extreme heat above 30 degC, days per maximum-temperature band, water balance,
   silking-window VPD, spring warmth and rain; `cropbench_annotator.season_features`).
3. Panel model on the training years: county fixed effects, a linear technology trend and a
   ridge on the county-demeaned features, boosted trees on its residuals
   (`cropbench_models.panel_fit_predict`); predict every owed county-year.
4. Report an estimate of the test RMSE and MAE: the same model fitted without the last 3 training
   years and scored on them.
"""

from __future__ import annotations

from cropbench_annotator import read_query
from cropbench_runs import panel_years_run, pooled
from metrics import mae, rmse

TARGET = "yield_t_ha"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "rad_j_m2_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d"]


def main() -> None:
    """Predict the withheld test years; write the artifact and the estimates."""
    _, artifact, panel, _ = read_query(DAILY, TARGET)
    panel_years_run(panel, artifact, TARGET, {"rmse_t_ha": pooled(rmse), "mae_t_ha": pooled(mae)})


if __name__ == "__main__":
    main()
