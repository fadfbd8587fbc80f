"""Annotator reproduction: drought damage buffered by the soil's available water capacity.

Method (the gold; the prompt leaves the method to the agent; the source studies irrigation as the
buffer, here the soil's water store plays that role):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Water-balance and heat features per county-year over the season and the silking window placed
   by the crop calendar, plus spring rain (`cropbench_annotator.season_features`); the deficit
   terms are also multiplied by the county's available water capacity (awc, centred at 17 cm/m),
   so the yield lost per mm of deficit can shrink on soils that store more water.
3. Panel model on the training years: county fixed effects, linear trend, ridge on the
   county-demeaned terms, boosted trees on its residuals; predict every owed row.
4. Report an estimate of RMSE and MAE from the last 3 training years held out.
"""

from __future__ import annotations

from cropbench_annotator import KEY, read_query
from cropbench_runs import panel_years_run, pooled
from metrics import mae, rmse

TARGET = "yield_t_ha"
DEFICITS = ("season_cwb", "silking_cwb", "spring_prec", "silking_prec")


def main() -> None:
    """Predict the withheld test years; write the artifact and the estimates."""
    scope, artifact, panel, entities = read_query(["prec_mm_d", "et0_mm_d", "cwb_mm_d", "tmax_c"], TARGET)
    awc = panel[KEY].map(entities["awc_cm_m"]).fillna(17.0) - 17.0
    for name in DEFICITS:
        panel[f"{name}_x_awc"] = panel[name] * awc
    panel_years_run(panel, artifact, TARGET, {"rmse_t_ha": pooled(rmse), "mae_t_ha": pooled(mae)})


if __name__ == "__main__":
    main()
