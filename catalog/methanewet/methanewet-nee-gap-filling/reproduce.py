"""Annotator reproduction: fill gaps in daily net ecosystem exchange from meteorology.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, a linear regression of NEE on the day's radiation, air temperature and vapour pressure
   deficit (the drivers the marginal-distribution-sampling look-up conditions on) and a seasonal
   growing-season index.
2. Gradient-boosted trees pooled over the scope's sites learn its residuals from the same drivers
   and their running means.
3. Inside a gap the model is corrected by its residuals at the gap's edges (AR(1) interpolation).
4. Report the graded metrics estimated on seeded pseudo-gaps of 2-10 measured days.
"""

from __future__ import annotations

from methanewet_models import Setup
from methanewet_runs import run_gap_filling

DRIVERS = ["sw_in_f_w_m2", "ta_f_c", "vpd_f_hpa"]
SETUP = Setup(target="nee_umol_m2_s", drivers=DRIVERS, log=False,
              process=["sw_in_f_w_m2", "ta_f_c", "vpd_f_hpa", "pool_30"])
METRICS = {"rmse_umol_m2_s": ("rmse", "pooled"), "nse_median": ("nse", "median")}

if __name__ == "__main__":
    run_gap_filling(SETUP, METRICS, 0.1, (2, 10))
