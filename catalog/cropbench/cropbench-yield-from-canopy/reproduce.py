"""Annotator reproduction: county maize yields from satellite canopy observations alone.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Canopy features per county-year, placed by the county's crop calendar: mean and maximum of the
   observed NDVI and FPAR composites over the season and over the silking window (the peak
   canopy; `cropbench_annotator.season_features`). Years before the satellite record have none
   (they sit at the feature mean).
3. Panel model on the training years: county fixed effects, linear trend, ridge on the
   county-demeaned canopy features, boosted trees on its residuals; predict every owed row.
4. Report an estimate of RMSE and r2 from the last 3 training years held out.
"""

from __future__ import annotations

from cropbench_annotator import feature_columns, owed_rows, r2, read_query, rmse, write_answer, write_artifact
from cropbench_models import panel_fit_predict, validation_split

TARGET = "yield_t_ha"


def main() -> None:
    """Predict the withheld test years from the canopy; write the artifact and the estimates."""
    scope, artifact, panel, _ = read_query(["ndvi", "fpar_pct"], TARGET)
    features = feature_columns(panel)
    owed = owed_rows(panel, TARGET)
    panel["yield_pred_t_ha"] = float("nan")
    panel.loc[owed, "yield_pred_t_ha"] = panel_fit_predict(panel, ~owed, owed, TARGET, features)
    fit, check = validation_split(panel, ~owed, years=3)
    estimate = panel_fit_predict(panel, fit, check, TARGET, features)
    observed = panel.loc[check, TARGET].to_numpy()
    write_artifact(panel[owed], artifact)
    write_answer({"rmse_t_ha": rmse(observed, estimate), "r2": r2(observed, estimate)})


if __name__ == "__main__":
    main()
