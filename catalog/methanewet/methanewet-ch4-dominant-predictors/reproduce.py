"""Annotator reproduction: a parsimonious methane model on the dominant predictors.

Method (the gold; the prompt leaves the method to the agent):
1. The dominant controls, by time scale: shallow soil temperature (same day, exponential), the
   water table below the surface (days to weeks) and the seasonal substrate supply (the
   growing-season index smoothed over 30 and 90 days). Per site, log flux is regressed on them.
2. Gradient-boosted trees pooled over the sites learn the residuals from the dominant predictors
   only (soil temperatures, water table, precipitation and their running means); the other
   candidates are left out.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_holdout

DRIVERS = ["ts_1_c", "ts_2_c", "wtd_m", "p_f_mm", "ta_f_c"]
METRICS = {"nse_median": ("nse", "median"), "rmse_nmol_m2_s": ("rmse", "pooled")}

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS), METRICS)
