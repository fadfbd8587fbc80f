"""Annotator reproduction: a methane model with seasonal flux-temperature hysteresis.

Method (the gold; the prompt leaves the method to the agent):
1. Hysteresis as a lagged substrate supply: the growing-season index clip(T / 15 degC, 0, 1) of
   soil temperature smoothed over 30 and 90 days is low in spring and high in autumn at one
   temperature. Per site, log flux is regressed on soil temperature, the substrate pools and the
   water table below the surface.
2. No pooled learner: the per-site process model predicts the test period.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_holdout

DRIVERS = ["ts_1_c", "ta_f_c", "wtd_m"]
METRICS = {"kge_median": ("kge", "median"), "mae_nmol_m2_s": ("mae", "pooled")}

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS, learner="none"), METRICS)
