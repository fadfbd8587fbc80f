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

from cropbench_annotator import (
    YEAR,
    feature_columns,
    nse,
    owed_rows,
    per_entity,
    read_query,
    rmse,
    write_answer,
    write_artifact,
)
from cropbench_models import panel_fit_predict, validation_split

TARGET = "yield_t_ha"
TIME_VARYING = ("edd", "silking_vpd", "season_vpd", "silking_edd")


def main() -> None:
    """Predict the withheld test years; write the artifact and the estimates."""
    scope, artifact, panel, _ = read_query(["tmin_c", "tmax_c", "prec_mm_d", "vpd_hpa"], TARGET)
    for name in TIME_VARYING:
        panel[f"{name}_x_year"] = panel[name] * (panel[YEAR] - 2000) / 10
    features = feature_columns(panel)
    owed = owed_rows(panel, TARGET)
    panel["yield_pred_t_ha"] = float("nan")
    panel.loc[owed, "yield_pred_t_ha"] = panel_fit_predict(panel, ~owed, owed, TARGET, features)
    fit, check = validation_split(panel, ~owed, years=4)
    held = panel[check].assign(estimate=panel_fit_predict(panel, fit, check, TARGET, features))
    write_artifact(panel[owed], artifact)
    write_answer({"median_nse": per_entity(held, TARGET, "estimate", nse),
                  "rmse_t_ha": rmse(held[TARGET], held["estimate"])})


if __name__ == "__main__":
    main()
