"""Annotator reproduction: a daily methane model evaluated within one wetland stratum.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, log flux regressed on soil temperature, the water table below the surface and
   substrate pools (growing-season index smoothed over 30 and 90 days).
2. Gradient-boosted trees pooled over the stratum's sites learn the residuals from every driver,
   their running means and the season.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_holdout

DRIVERS = ["ta_f_c", "ts_1_c", "wtd_m", "p_f_mm", "sw_in_f_w_m2", "vpd_f_hpa", "le_f_w_m2",
           "h_f_w_m2"]
METRICS = {"r2_median": ("r2", "median"), "nse_mean": ("nse", "mean")}

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS), METRICS)
