"""Annotator reproduction: upscaling with gridded-style predictors only.

Method (the gold; the prompt leaves the method to the agent):
1. Features per day from the six predictors: values, 7- and 30-day means of air temperature (soil
   heat lags), the growing-season index of air temperature smoothed over 30 and 90 days
   (substrate), 30-day rain; site attributes (latitude, class, record means).
2. In log space, the mean of a pooled process regression and a pooled random forest fitted on the
   measured sites; retransformed with the pooled smearing factor.
3. Report the metrics estimated by leaving three folds of measured sites out in turn.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_held_out_sites

DRIVERS = ["ta_f_c", "sw_in_f_w_m2", "vpd_f_hpa", "p_f_mm", "le_f_w_m2", "pa_f_kpa"]
METRICS = {"r2_pooled": ("r2", "pooled")}
PROCESS = ["temperature_7", "temperature_30", "pool_30", "pool_90"]

if __name__ == "__main__":
    run_held_out_sites(Setup(target=TARGET, drivers=DRIVERS, learner="rf", process=PROCESS), METRICS)
