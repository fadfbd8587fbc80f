"""Annotator reproduction: fill the null days of daily wetland methane flux records.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, in log space, a regression of the flux on the process terms: soil temperature
   (Q10 response), the water table below the surface, and substrate pools (the growing-season
   index smoothed over 30 and 90 days).
2. A random forest pooled over the scope's sites learns the regression's residuals from every
   driver (meteorology, turbulence, energy and CO2 fluxes, lagged temperature and rain).
3. Inside a gap the model is corrected by its residuals at the gap's edges (the best AR(1)
   interpolation of the residual between the two edge days).
4. Report the graded metrics estimated on pseudo-gaps: runs of 3-15 measured days hidden
   (seeded), filled by the same method.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_models import Setup
from methanewet_runs import run_gap_filling

DRIVERS = ["ta_f_c", "ts_1_c", "ts_2_c", "wtd_m", "p_f_mm", "sw_in_f_w_m2", "vpd_f_hpa", "pa_f_kpa",
           "ws_f_m_s", "le_f_w_m2", "h_f_w_m2", "nee_f_umol_m2_s", "ustar_m_s"]
METRICS = {"rmse_nmol_m2_s": ("rmse", "pooled"), "nse_median": ("nse", "median")}

if __name__ == "__main__":
    run_gap_filling(Setup(target=TARGET, drivers=DRIVERS, learner="rf"), METRICS, 0.15, (3, 15))
