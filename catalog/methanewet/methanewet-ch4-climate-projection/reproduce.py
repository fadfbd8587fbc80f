"""Annotator reproduction: a perfect-forcing projection of methane from temperature and rain.

Method (the gold; the prompt leaves the method to the agent):
1. From air temperature: 7- and 30-day running means (soil heat) and the growing-season index
   smoothed over 30 and 90 days (substrate); from precipitation its 30-day running mean.
2. Per site, log flux regressed on those states; gradient-boosted trees pooled over the sites
   learn the residuals.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_holdout

DRIVERS = ["ta_f_c", "p_f_mm"]
METRICS = {"nse_median": ("nse", "median"), "kge_median": ("kge", "median")}
PROCESS = ["temperature_7", "temperature_30", "pool_30", "pool_90"]

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS, process=PROCESS), METRICS)
