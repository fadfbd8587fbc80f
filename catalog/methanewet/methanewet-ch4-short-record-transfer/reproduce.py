"""Annotator reproduction: transfer a shared methane response to short site records.

Method (the gold; the prompt leaves the method to the agent; a thin ST-Bench cell: the task adapts
parameter transfer from a shared source model, as surveyed by the cited method paper, to flux
towers):
1. Shared source model: one log-linear regression pooled over every site's short record on soil
   temperature, the water table below the surface and substrate pools, with a site intercept
   (the sites share the shape of the response and differ in level).
2. Fine-tuning: per site, the shared slopes are kept and only the intercept is refitted on the
   site's own months; pooled gradient-boosted trees learn the remaining residuals.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup, transfer
from methanewet_runs import run_holdout

DRIVERS = ["ta_f_c", "ts_1_c", "wtd_m", "p_f_mm", "sw_in_f_w_m2", "vpd_f_hpa", "le_f_w_m2"]
METRICS = {"nse_median": ("nse", "median"), "kge_median": ("kge", "median")}

if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS), METRICS, method=transfer)
