"""Annotator reproduction: a linear yield model against a random forest on the same inputs.

Method (the gold):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. One set of season features per county-year from the daily weather, placed by the crop
   calendar (`cropbench_annotator.season_features`), shared by both models.
3. Linear model: county fixed effects, linear trend and a ridge (alpha 3 on standardised
   features) on the county-demeaned features. Random forest: the same county effects and trend
   (fitted alone), then a random forest on the county-demeaned features learns the rest (a forest
   cannot extrapolate the trend into the test years by itself).
4. Report each model's RMSE estimated on the last 3 training years held out.
"""

from __future__ import annotations

from annotator_common import write_answer, write_artifact
from cropbench_annotator import feature_columns, owed_rows, read_query
from cropbench_models import panel_fit_predict, validation_split
from metrics import rmse

TARGET = "yield_t_ha"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "rad_j_m2_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d"]
MODELS = {"yield_linear_t_ha": {"learner": None}, "yield_forest_t_ha": {"learner": "forest", "linear": False}}


def main() -> None:
    """Predict the withheld years with both models; write the artifact and the estimates."""
    scope, artifact, panel, _ = read_query(DAILY, TARGET)
    features = feature_columns(panel)
    owed = owed_rows(panel, TARGET)
    fit, check = validation_split(panel, ~owed, years=3)
    estimates = {}
    for column, options in MODELS.items():
        panel.loc[owed, column] = panel_fit_predict(panel, ~owed, owed, TARGET, features, **options)
        guess = panel_fit_predict(panel, fit, check, TARGET, features, **options)
        estimates[column.replace("yield_", "rmse_")] = rmse(panel.loc[check, TARGET], guess)
    write_artifact(panel[owed], artifact)
    write_answer(metrics=estimates)


if __name__ == "__main__":
    main()
