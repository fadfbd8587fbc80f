"""Annotator reproduction: compare model families, hand in the ensemble.

Method (the gold; the prompt leaves the method to the agent):
1. Three families fitted on the training period: the per-site process regression alone (log flux
   on soil temperature, water table below the surface and substrate pools), the process
   regression plus pooled gradient-boosted trees on its residuals, and the process regression
   plus a pooled random forest on its residuals.
2. The ensemble mean of the three is handed in (the intercomparison found it at least as good as
   its best member on the validation period).
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup, predict
from methanewet_runs import run_holdout

DRIVERS = ["ta_f_c", "ts_1_c", "ts_2_c", "wtd_m", "p_f_mm", "sw_in_f_w_m2", "vpd_f_hpa",
           "le_f_w_m2", "h_f_w_m2", "nee_f_umol_m2_s"]
METRICS = {"nse_median": ("nse", "median"), "kge_median": ("kge", "median")}
MEMBERS = ("none", "gbm", "rf")


def ensemble(frame, setup, train):
    """Mean of the process model and the two process + pooled-learner models."""
    members = [predict(frame, Setup(setup.target, setup.drivers, learner=kind), train) for kind in MEMBERS]
    return sum(members) / len(members)


if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS), METRICS, method=ensemble)
