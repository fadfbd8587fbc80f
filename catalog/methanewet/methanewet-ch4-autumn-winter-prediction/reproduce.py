"""Annotator reproduction: methane through autumn and early winter.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, log flux regressed on soil temperature, the water table below the surface and the
   substrate pools (growing-season index smoothed over 30 and 90 days), which keep autumn fluxes
   above spring ones at one temperature.
2. Gradient-boosted trees pooled over the sites learn the residuals from every driver.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_holdout

DRIVERS = ["ta_f_c", "ts_1_c", "ts_2_c", "wtd_m", "p_f_mm", "sw_in_f_w_m2", "le_f_w_m2"]
METRICS = {"mae_nmol_m2_s": ("mae", "pooled"), "nse_median": ("nse", "median")}

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS), METRICS)
