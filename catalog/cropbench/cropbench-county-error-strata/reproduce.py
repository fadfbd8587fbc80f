"""Annotator reproduction: county yields with errors small in every county, not only on average.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Season features from the daily weather placed by the crop calendar
   (`cropbench_annotator.season_features`), plus the county's harvested area of the year and the
   drought terms multiplied by its soil water capacity (dry, shallow soils err most).
3. Panel model on the training years (county fixed effects, trend, ridge, boosted trees on its
   residuals); predict every owed row.
4. Report the mean per-county RMSE and median per-county MAE estimated on the last 3 training
   years.
"""

from __future__ import annotations

from cropbench_annotator import KEY, read_query
from cropbench_runs import panel_years_run, per_county
from metrics import mae, rmse

TARGET = "yield_t_ha"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d"]


def main() -> None:
    """Predict the withheld test years; write the artifact and the per-county estimates."""
    scope, artifact, panel, entities = read_query(DAILY, TARGET)
    awc = panel[KEY].map(entities["awc_cm_m"]).fillna(17.0) - 17.0
    for name in ("season_cwb", "silking_cwb"):
        panel[f"{name}_x_awc"] = panel[name] * awc
    panel["area"] = panel["harvest_area_ha"]
    panel_years_run(panel, artifact, TARGET, {"mean_county_rmse_t_ha": per_county(rmse, "mean"),
                                              "median_county_mae_t_ha": per_county(mae)})


if __name__ == "__main__":
    main()
