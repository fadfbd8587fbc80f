"""Annotator reproduction: the temperature dependence of methane flux, tested out of sample.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, log flux regressed on soil temperature (an exponential, Q10 / Arrhenius response),
   on the water table below the surface (an exponential decline as it drops) and on substrate
   pools: the growing-season index clip(T / 15 degC, 0, 1) smoothed over 30 and 90 days, which
   lets the late season emit more than the early season at one temperature.
2. No pooled learner: the per-site response alone predicts the test period (retransformed from
   log space with the site's smearing factor).
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_holdout

DRIVERS = ["ts_1_c", "wtd_m"]
METRICS = {"r2_median": ("r2", "median"), "nse_median": ("nse", "median")}

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS, learner="none", lags=False), METRICS)
