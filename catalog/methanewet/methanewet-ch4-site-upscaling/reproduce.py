"""Annotator reproduction: predict the methane flux of sites without measurements.

Method (the gold; the prompt leaves the method to the agent):
1. Features per day: the drivers, their running means, substrate pools (the growing-season index
   smoothed over 30 and 90 days) and the site's attributes (latitude, wetland class, record means
   of temperature, water table, rain and latent heat).
2. In log space, the mean of a pooled process regression (shared temperature, water-table and
   substrate terms plus attributes) and pooled gradient-boosted trees, both fitted on the measured
   sites; retransformed with the pooled smearing factor.
3. Report the metrics estimated by leaving three folds of measured sites out in turn.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_held_out_sites

DRIVERS = ["ta_f_c", "ts_1_c", "wtd_m", "p_f_mm", "sw_in_f_w_m2", "vpd_f_hpa", "le_f_w_m2",
           "h_f_w_m2"]
METRICS = {"r2_median": ("r2", "median"), "r2_pooled": ("r2", "pooled")}

if __name__ == "__main__":
    run_held_out_sites(Setup(target=TARGET, drivers=DRIVERS), METRICS)
