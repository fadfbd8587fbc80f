"""Annotator reproduction: the network's flux magnitude and seasonality, carried forward.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, log flux regressed on air temperature and substrate pools (the growing-season index
   of air temperature smoothed over 30 and 90 days), with 7- and 30-day running means of
   temperature and the water balance (rain minus a temperature-driven loss, smoothed over 40
   days) among the pooled features.
2. Gradient-boosted trees pooled over the sites learn the residuals from those features, the
   season and the site's mean level.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_holdout

DRIVERS = ["ta_f_c", "p_f_mm"]
METRICS = {"mae_nmol_m2_s": ("mae", "pooled"), "kge_median": ("kge", "median")}

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS), METRICS)
