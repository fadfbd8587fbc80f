"""Annotator reproduction: daily methane prediction of the end of the record, per climate stratum.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, log flux regressed on soil temperature, the water table below the surface and
   substrate pools (growing-season index smoothed over 30 and 90 days).
2. Gradient-boosted trees pooled over the stratum's sites learn the residuals from every driver
   (production, rain and their running means) and the season.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_holdout

DRIVERS = ["ta_f_c", "ts_1_c", "wtd_m", "p_f_mm", "gpp_dt_umol_m2_s"]
METRICS = {"kge_median": ("kge", "median"), "mae_nmol_m2_s": ("mae", "pooled")}

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS), METRICS)
