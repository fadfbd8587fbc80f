"""Annotator reproduction: forcing-driven methane models, ensemble of formulations.

Method (the gold; the prompt leaves the method to the agent):
1. Soil state from forcing: 7- and 30-day running means of air temperature for the soil, the
   growing-season index smoothed over 30 and 90 days for substrate, 30-day rain for wetness.
2. Two formulations fitted on the first half: the per-site log-linear response to those states,
   and the same plus pooled gradient-boosted trees on its residuals; their mean is handed in.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup, predict
from methanewet_runs import run_holdout

DRIVERS = ["ta_f_c", "p_f_mm", "sw_in_f_w_m2", "lw_in_f_w_m2", "vpd_f_hpa", "pa_f_kpa", "ws_f_m_s"]
METRICS = {"rmse_nmol_m2_s": ("rmse", "pooled"), "r2_pooled": ("r2", "pooled")}
PROCESS = ["temperature_7", "temperature_30", "pool_30", "pool_90", "p_f_mm_30"]


def ensemble(frame, setup, train):
    """Mean of the forcing-driven process model with and without pooled trees on its residuals."""
    members = [predict(frame, Setup(setup.target, setup.drivers, learner=kind, process=PROCESS), train)
               for kind in ("none", "gbm")]
    return sum(members) / len(members)


if __name__ == "__main__":
    run_holdout(Setup(target=TARGET, drivers=DRIVERS), METRICS, method=ensemble)
