"""Annotator reproduction: daily methane prediction from every driver.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, log flux regressed on soil temperature, the water table below the surface and
   substrate pools (the growing-season index smoothed over 30 and 90 days).
2. Gradient-boosted trees pooled over the sites learn the residuals from every driver (carbon
   fluxes included) and their running means.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_holdout

DRIVERS = ["ta_f_c", "ts_1_c", "wtd_m", "p_f_mm", "sw_in_f_w_m2", "vpd_f_hpa", "le_f_w_m2",
           "gpp_dt_umol_m2_s", "reco_dt_umol_m2_s"]
METRICS = {"r2_pooled": ("r2", "pooled"), "kge_median": ("kge", "median")}

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS), METRICS)
