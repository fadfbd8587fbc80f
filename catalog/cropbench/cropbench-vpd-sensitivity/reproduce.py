"""Annotator reproduction: yield response to VPD, with a sensitivity that may change over time.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. VPD per county-year: mean over the season and over the silking window placed by the crop
   calendar, and the spring mean (`cropbench_annotator.season_features`); excess silking VPD
   above 9 hPa; each VPD term also multiplied by (year - 2000) / 10, so the ridge can let the
   yield lost per hPa change linearly over the years.
3. Panel model on the training years: county fixed effects, linear trend, ridge on the
   county-demeaned terms; no trees (they could not carry a drifting sensitivity forward).
4. Report an estimate of RMSE and median NSE from the last 4 training years held out.
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
THRESHOLD_HPA = 9.0


def main() -> None:
    """Predict the withheld test years from VPD; write the artifact and the estimates."""
    scope, artifact, panel, _ = read_query(["vpd_hpa"], TARGET)
    panel["silking_vpd_excess"] = (panel["silking_vpd"] - THRESHOLD_HPA).clip(lower=0)
    for name in ("silking_vpd", "season_vpd", "silking_vpd_excess"):
        panel[f"{name}_x_year"] = panel[name] * (panel[YEAR] - 2000) / 10
    features = feature_columns(panel)
    owed = owed_rows(panel, TARGET)
    model = lambda fit, new: panel_fit_predict(panel, fit, new, TARGET, features, learner=None)  # noqa: E731
    panel["yield_pred_t_ha"] = float("nan")
    panel.loc[owed, "yield_pred_t_ha"] = model(~owed, owed)
    fit, check = validation_split(panel, ~owed, years=4)
    held = panel[check].assign(estimate=model(fit, check))
    write_artifact(panel[owed], artifact)
    write_answer({"rmse_t_ha": rmse(held[TARGET], held["estimate"]),
                  "median_nse": per_entity(held, TARGET, "estimate", nse)})


if __name__ == "__main__":
    main()
