"""Annotator reproduction: yields of counties without records from their environment.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Season features per county-year from the daily weather, placed by the crop calendar
   (`cropbench_annotator.season_features`), expressed relative to the year's mean over the
   counties with records; plus each county's soil and calendar.
3. The year's mean yield over the counties with records carries the year; boosted trees learn a
   county's departure from it from those features, cross-fitted over folds of counties so that
   training departures are measured against a year mean the county did not enter
   (`cropbench_models.transfer_fit_predict`).
4. Report an estimate of both metrics: the same model with a quarter of the public counties
   withheld (every fourth county in id order).
"""

from __future__ import annotations

from cropbench_annotator import feature_columns, read_query
from cropbench_runs import held_out_counties_run, per_county, pooled
from metrics import nse, rmse

TARGET = "yield_t_ha"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "rad_j_m2_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d"]


def main() -> None:
    """Predict the held-out counties; write the artifact and the estimates."""
    scope, artifact, panel, entities = read_query(DAILY, TARGET)
    held_out_counties_run(panel, entities, artifact, TARGET, "yield_pred_t_ha", feature_columns(panel),
                          {"rmse_t_ha": pooled(rmse), "median_nse": per_county(nse)}, every=4)


if __name__ == "__main__":
    main()
