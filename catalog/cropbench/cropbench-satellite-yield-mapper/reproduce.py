"""Annotator reproduction: yields of non-reporting counties from satellite canopy and some weather.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Canopy and weather features per county-season placed by the crop calendar: mean and maximum
   NDVI and FPAR over the season and the silking window (peak canopy), extreme heat, season and
   silking rain (`cropbench_annotator.season_features`).
3. Transfer model (`cropbench_models.transfer_fit_predict`): the reporting counties' year mean
   plus boosted trees on each county's departure, learnt from its canopy and weather relative to
   the year's mean.
4. Report an estimate of both metrics with every third reporting county withheld.
"""

from __future__ import annotations

from cropbench_annotator import feature_columns, read_query
from cropbench_runs import held_out_counties_run, pooled
from metrics import r2, rmse

TARGET = "yield_t_ha"


def main() -> None:
    """Predict the non-reporting counties; write the artifact and the estimates."""
    scope, artifact, panel, entities = read_query(["tmax_c", "prec_mm_d", "ndvi", "fpar_pct"], TARGET)
    held_out_counties_run(panel, entities, artifact, TARGET, "yield_pred_t_ha", feature_columns(panel),
                          {"rmse_t_ha": pooled(rmse), "r2": pooled(r2)}, every=3)


if __name__ == "__main__":
    main()
