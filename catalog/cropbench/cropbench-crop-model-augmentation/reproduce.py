"""Annotator reproduction: a yield model augmented with a simulated crop water balance.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Weather features per county-season placed by the crop calendar
   (`cropbench_annotator.season_features`).
3. Augmentation: a minimal crop water-balance simulation per county (root-zone bucket sized by
   the soil's available water capacity, crop demand kc x ET0 through the season;
   `cropbench_annotator.simulated_water_stress`); its season and silking-window unmet demand join
   the features.
4. Panel model on the training years: county fixed effects, trend, ridge, boosted trees on its
   residuals; predict every owed row. Report RMSE and r2 estimated on the last 3 training years.
"""

from __future__ import annotations

from pathlib import Path

from cropbench_annotator import KEY, YEAR, read_query, read_table, simulated_water_stress
from cropbench_runs import panel_years_run, pooled
from metrics import r2, rmse

TARGET = "yield_t_ha"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "et0_mm_d"]


def main() -> None:
    """Predict the withheld test years with the augmented model; write artifact and estimates."""
    scope, artifact, panel, entities = read_query(DAILY, TARGET)
    series = read_table(Path("data"), "timeseries", scope, [KEY, "date", "prec_mm_d", "et0_mm_d"])
    simulated = simulated_water_stress(series, entities["sos_doy"], entities["awc_cm_m"])
    panel = panel.join(simulated, on=[KEY, YEAR])
    panel_years_run(panel, artifact, TARGET, {"rmse_t_ha": pooled(rmse), "r2": pooled(r2)})


if __name__ == "__main__":
    main()
