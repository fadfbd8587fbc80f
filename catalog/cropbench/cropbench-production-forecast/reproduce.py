"""Annotator reproduction: end-of-season forecasts of county maize production.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Production is area x yield and the area is known: forecast the yield (production / area of the
   training years) and multiply by the forecast year's harvested area.
3. Yield model: season features from the daily weather and the interpolated FPAR/NDVI, placed by
   the crop calendar (`cropbench_annotator.season_features`); panel model with county fixed
   effects, linear trend, ridge on the county-demeaned features and boosted trees on its residuals.
4. Report an estimate of MAE and RMSE from the last 3 training years held out.
"""

from __future__ import annotations

from annotator_common import write_answer, write_artifact
from cropbench_annotator import feature_columns, owed_rows, read_query
from cropbench_models import panel_fit_predict, validation_split
from metrics import mae, rmse

TARGET = "production_t"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "rad_j_m2_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d",
         "fpar_interp_pct", "ndvi_interp"]


def main() -> None:
    """Forecast yield x area for the withheld years; write the artifact and the estimates."""
    scope, artifact, panel, _ = read_query(DAILY, TARGET)
    panel["yield_t_ha"] = panel[TARGET] / panel["harvest_area_ha"]
    features = feature_columns(panel)
    owed = owed_rows(panel, TARGET)
    area = panel["harvest_area_ha"].to_numpy()
    panel["production_fc_t"] = float("nan")
    panel.loc[owed, "production_fc_t"] = area[owed] * panel_fit_predict(panel, ~owed, owed, "yield_t_ha",
                                                                       features)
    fit, check = validation_split(panel, ~owed, years=3)
    estimate = area[check] * panel_fit_predict(panel, fit, check, "yield_t_ha", features)
    observed = panel.loc[check, TARGET].to_numpy()
    write_artifact(panel[owed], artifact)
    write_answer(metrics={"mae_t": mae(observed, estimate), "rmse_t": rmse(observed, estimate)})


if __name__ == "__main__":
    main()
