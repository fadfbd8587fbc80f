"""Annotator reproduction: calibrate on half the sites, evaluate on the other half.

Method (the gold; the prompt leaves the method to the agent):
1. Features per day: drivers, running means, substrate pools and site attributes.
2. In log space, the mean of a pooled process regression and pooled gradient-boosted trees fitted
   on the calibration sites; retransformed with the pooled smearing factor.
3. Report the metrics estimated by leaving three folds of calibration sites out in turn.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_held_out_sites

DRIVERS = ["ta_f_c", "ts_1_c", "wtd_m", "p_f_mm", "sw_in_f_w_m2", "le_f_w_m2", "gpp_dt_umol_m2_s"]
METRICS = {"kge_median": ("kge", "median"), "r2_median": ("r2", "median")}

if __name__ == "__main__":
    run_held_out_sites(Setup(target=TARGET, drivers=DRIVERS), METRICS)
