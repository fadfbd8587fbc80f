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

from cropbench_annotator import YEAR, read_query
from cropbench_runs import panel_years_run, per_county, pooled
from metrics import nse, rmse

TARGET = "yield_t_ha"
THRESHOLD_HPA = 9.0


def main() -> None:
    """Predict the withheld test years from VPD; write the artifact and the estimates."""
    _, artifact, panel, _ = read_query(["vpd_hpa"], TARGET)
    panel["silking_vpd_excess"] = (panel["silking_vpd"] - THRESHOLD_HPA).clip(lower=0)
    for name in ("silking_vpd", "season_vpd", "silking_vpd_excess"):
        panel[f"{name}_x_year"] = panel[name] * (panel[YEAR] - 2000) / 10
    panel_years_run(panel, artifact, TARGET, {"rmse_t_ha": pooled(rmse), "median_nse": per_county(nse)},
                    check_years=4, learner=None)


if __name__ == "__main__":
    main()
