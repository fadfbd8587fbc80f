"""Annotator reproduction: a degree-day yield model with and without extreme heat.

Method (the gold):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Season features per county-year placed by the crop calendar
   (`cropbench_annotator.season_features`). Warmth model: growing degree days and season rain
   only. Heat model: the same plus degree days above 30 degC over the season and over the
   silking window, and days per daily-maximum band.
3. Each model: county fixed effects, linear trend, ridge on its county-demeaned inputs (linear
   in the inputs, as the statistical models the source compares with crop models).
4. Report each model's RMSE and the heat model's median NSE from the last 4 training years.
"""

from __future__ import annotations

from annotator_common import write_answer, write_artifact
from cropbench_annotator import owed_rows, per_entity, read_query
from cropbench_models import panel_fit_predict, validation_split
from metrics import nse, rmse

TARGET = "yield_t_ha"
WARMTH = ["gdd", "season_prec"]
HEAT = [*WARMTH, "edd", "silking_edd", *(f"days_tmax_band{i}" for i in range(6))]


def main() -> None:
    """Predict the withheld years with both models; write the artifact and the estimates."""
    scope, artifact, panel, _ = read_query(["tmin_c", "tmax_c", "tavg_c", "prec_mm_d"], TARGET)
    owed = owed_rows(panel, TARGET)
    fit, check = validation_split(panel, ~owed, years=4)
    held = panel[check].copy()
    for name, features in (("warmth", WARMTH), ("heat", HEAT)):
        model = lambda a, b: panel_fit_predict(panel, a, b, TARGET, features, learner=None)  # noqa: B023, E731
        panel.loc[owed, f"yield_{name}_t_ha"] = model(~owed, owed)
        held[name] = model(fit, check)
    write_artifact(panel[owed], artifact)
    write_answer(metrics={"rmse_warmth_t_ha": rmse(held[TARGET], held["warmth"]),
                          "rmse_heat_t_ha": rmse(held[TARGET], held["heat"]),
                          "median_nse_heat": per_entity(held, TARGET, "heat", nse)})


if __name__ == "__main__":
    main()
