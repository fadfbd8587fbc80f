"""Annotator reproduction: fill methane gaps from a temperature response.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, log flux regressed on soil temperature (Q10 / Arrhenius response) and on the
   growing-season index of soil temperature smoothed over 30 and 90 days (the seasonal substrate
   supply that makes the response hysteretic).
2. Pooled gradient-boosted trees learn the residuals from soil and air temperature and their
   running means; inside a gap the model is corrected by its residuals at the gap's edges.
3. Report the graded metrics estimated on seeded pseudo-gaps of 10-40 measured days.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_gap_filling

DRIVERS = ["ts_1_c", "ta_f_c"]
METRICS = {"nse_median": ("nse", "median"), "r2_pooled": ("r2", "pooled")}

if __name__ == "__main__":
    run_gap_filling(Setup(target=TARGET, drivers=DRIVERS), METRICS, 0.15, (10, 40))
