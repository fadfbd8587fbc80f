"""Annotator reproduction: methane from lagged meteorology.

Method (the gold; the prompt leaves the method to the agent):
1. Antecedent features of air temperature: 7- and 30-day running means (soil heat lags) and the
   growing-season index clip(T / 15 degC, 0, 1) smoothed over 30 and 90 days (substrate); rain
   summed over 30 days (water table).
2. Per site, log flux regressed on air temperature and the substrate pools; gradient-boosted trees
   pooled over the sites learn the residuals from every lagged feature.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_holdout

DRIVERS = ["ta_f_c", "p_f_mm", "sw_in_f_w_m2", "vpd_f_hpa"]
METRICS = {"kge_median": ("kge", "median"), "r2_median": ("r2", "median")}
PROCESS = ["temperature_7", "temperature_30", "pool_30", "pool_90"]

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS, process=PROCESS), METRICS)
