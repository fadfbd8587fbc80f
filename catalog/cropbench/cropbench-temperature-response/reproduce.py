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

from cropbench_annotator import feature_columns, owed_rows, r2, read_query, rmse, write_answer, write_artifact
from cropbench_models import panel_fit_predict, validation_split

TARGET = "yield_t_ha"


def main() -> None:
    """Predict the withheld test years from temperature; write the artifact and the estimates."""
    scope, artifact, panel, _ = read_query(["tmin_c", "tmax_c"], TARGET)
    features = feature_columns(panel)
    owed = owed_rows(panel, TARGET)
    panel["yield_pred_t_ha"] = float("nan")
    panel.loc[owed, "yield_pred_t_ha"] = panel_fit_predict(panel, ~owed, owed, TARGET, features)
    fit, check = validation_split(panel, ~owed, years=3)
    estimate = panel_fit_predict(panel, fit, check, TARGET, features)
    observed = panel.loc[check, TARGET].to_numpy()
    write_artifact(panel[owed], artifact)
    write_answer({"r2": r2(observed, estimate), "rmse_t_ha": rmse(observed, estimate)})


if __name__ == "__main__":
    main()
