"""Annotator reproduction: predict unmonitored sites from a sparse network.

Method (the gold; the prompt leaves the method to the agent):
1. Representativeness through attributes: latitude, wetland class and record means of temperature
   and water table enter the model beside the daily drivers, their running means and substrate
   pools.
2. In log space, the mean of a pooled process regression and pooled gradient-boosted trees fitted
   on the few monitored sites; retransformed with the pooled smearing factor.
3. Report the metrics estimated by leaving three folds of monitored sites out in turn.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_held_out_sites

DRIVERS = ["ta_f_c", "ts_1_c", "p_f_mm", "sw_in_f_w_m2", "vpd_f_hpa"]
METRICS = {"kge_median": ("kge", "median"), "mae_nmol_m2_s": ("mae", "pooled")}

if __name__ == "__main__":
    run_held_out_sites(Setup(target=TARGET, drivers=DRIVERS), METRICS)
