"""Annotator reproduction: pre-season forecasts of county maize yields from the yield record.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. The technology trend is shared: one slope for every county, fitted on the county-demeaned
   yields (county fixed effects); each county keeps its own level. A per-county trend on a short,
   noisy record would chase single years, a mean or last value ignores the trend.
3. Forecast = county mean + common slope x (year - county's mean year). No year's weather is
   known before the season, so nothing else enters.
4. Report an estimate of the RMSE by forecasting the last 3 years of the record from the rest.
"""

from __future__ import annotations

from annotator_common import write_answer, write_artifact
from cropbench_annotator import owed_rows, read_query
from cropbench_models import panel_fit_predict, validation_split
from metrics import rmse

TARGET = "yield_t_ha"


def main() -> None:
    """Forecast the withheld years; write the artifact and the estimate."""
    scope, artifact, panel, _ = read_query([], TARGET)
    owed = owed_rows(panel, TARGET)
    forecast = lambda fit, new: panel_fit_predict(panel, fit, new, TARGET, [], learner=None, alpha=0.0)  # noqa: E731
    panel["yield_fc_t_ha"] = float("nan")
    panel.loc[owed, "yield_fc_t_ha"] = forecast(~owed, owed)
    fit, check = validation_split(panel, ~owed, years=3)
    write_artifact(panel[owed], artifact)
    write_answer(metrics={"rmse_t_ha": rmse(panel.loc[check, TARGET], forecast(fit, check))})


if __name__ == "__main__":
    main()
