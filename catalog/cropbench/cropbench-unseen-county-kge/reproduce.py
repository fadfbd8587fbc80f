"""Annotator reproduction: yield series of counties kept out of training, scored by KGE.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Season features from the daily weather and the interpolated FPAR/NDVI placed by the crop
   calendar (`cropbench_annotator.season_features`).
3. Transfer model (`cropbench_models.transfer_fit_predict`): the training counties' year mean
   carries the year (and with it the variability and timing KGE scores); boosted trees learn each
   county's departure from it from its soil, calendar, weather and canopy relative to the year's.
4. Report an estimate of both metrics with every third training county withheld.
"""

from __future__ import annotations

from cropbench_annotator import feature_columns, read_query
from cropbench_runs import held_out_counties_run, per_county, pooled
from metrics import kge, rmse

TARGET = "yield_t_ha"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "rad_j_m2_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d",
         "fpar_interp_pct", "ndvi_interp"]


def main() -> None:
    """Predict the held-out counties; write the artifact and the estimates."""
    scope, artifact, panel, entities = read_query(DAILY, TARGET)
    held_out_counties_run(panel, entities, artifact, TARGET, "yield_pred_t_ha", feature_columns(panel),
                          {"median_kge": per_county(kge), "rmse_t_ha": pooled(rmse)}, every=3)


if __name__ == "__main__":
    main()
