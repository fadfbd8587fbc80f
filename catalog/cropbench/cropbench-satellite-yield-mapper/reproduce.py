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

import numpy as np
from cropbench_annotator import KEY, feature_columns, owed_rows, r2, read_query, rmse, write_answer, write_artifact
from cropbench_models import transfer_fit_predict

TARGET = "yield_t_ha"


def main() -> None:
    """Predict the non-reporting counties; write the artifact and the estimates."""
    scope, artifact, panel, entities = read_query(["tmax_c", "prec_mm_d", "ndvi", "fpar_pct"], TARGET)
    features = feature_columns(panel)
    owed = owed_rows(panel, TARGET)
    panel["yield_pred_t_ha"] = np.nan
    panel.loc[owed, "yield_pred_t_ha"] = transfer_fit_predict(panel, entities, ~owed, owed, TARGET, features)
    public = sorted(panel.loc[~owed, KEY].unique())
    check = panel[KEY].isin(public[::3]).to_numpy() & ~owed
    held = panel[check].assign(
        estimate=transfer_fit_predict(panel, entities, ~owed & ~check, check, TARGET, features))
    write_artifact(panel[owed], artifact)
    write_answer({"rmse_t_ha": rmse(held[TARGET], held["estimate"]), "r2": r2(held[TARGET], held["estimate"])})


if __name__ == "__main__":
    main()
