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

from cropbench_annotator import feature_columns, mae, owed_rows, read_query, rmse, write_answer, write_artifact
from cropbench_models import panel_fit_predict, validation_split

TARGET = "yield_t_ha"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "rad_j_m2_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d"]


def main() -> None:
    """Predict the withheld test years; write the artifact and the estimates."""
    scope, artifact, panel, _ = read_query(DAILY, TARGET)
    features = feature_columns(panel)
    owed = owed_rows(panel, TARGET)
    panel["yield_pred_t_ha"] = float("nan")
    panel.loc[owed, "yield_pred_t_ha"] = panel_fit_predict(panel, ~owed, owed, TARGET, features)
    fit, check = validation_split(panel, ~owed, years=3)
    estimate = panel_fit_predict(panel, fit, check, TARGET, features)
    observed = panel.loc[check, TARGET].to_numpy()
    write_artifact(panel[owed], artifact)
    write_answer({"rmse_t_ha": rmse(observed, estimate), "mae_t_ha": mae(observed, estimate)})


if __name__ == "__main__":
    main()
