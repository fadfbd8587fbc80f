"""Annotator reproduction: fill long gaps (20-60 days) in daily wetland methane fluxes.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, in log space, a regression of the flux on soil temperature (Q10 response), the water
   table below the surface and substrate pools (the growing-season index smoothed over 30 and 90
   days): the process part carries a long gap, where the edges say little.
2. Gradient-boosted trees pooled over the scope's sites learn the regression's residuals from the
   meteorological and energy drivers and their running means.
3. Residuals at the gap edges are carried into the gap with their AR(1) decay only.
4. Report the graded metrics estimated on seeded pseudo-gaps of 20-60 measured days.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_gap_filling

DRIVERS = ["ta_f_c", "ts_1_c", "ts_2_c", "wtd_m", "p_f_mm", "sw_in_f_w_m2", "vpd_f_hpa", "pa_f_kpa",
           "le_f_w_m2", "h_f_w_m2"]
METRICS = {"kge_median": ("kge", "median"), "mae_nmol_m2_s": ("mae", "pooled")}

if __name__ == "__main__":
    run_gap_filling(Setup(target=TARGET, drivers=DRIVERS), METRICS, 0.2, (20, 60))
