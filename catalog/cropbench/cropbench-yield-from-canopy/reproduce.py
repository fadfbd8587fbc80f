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

from cropbench_annotator import read_query
from cropbench_runs import panel_years_run, pooled
from metrics import r2, rmse

TARGET = "yield_t_ha"


def main() -> None:
    """Predict the withheld test years from the canopy; write the artifact and the estimates."""
    _, artifact, panel, _ = read_query(["ndvi", "fpar_pct"], TARGET)
    panel_years_run(panel, artifact, TARGET, {"rmse_t_ha": pooled(rmse), "r2": pooled(r2)})


if __name__ == "__main__":
    main()
