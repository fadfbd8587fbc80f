"""Annotator reproduction: yields of non-reporting counties from a sparse reporting sample.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Season features from the daily weather placed by the crop calendar
   (`cropbench_annotator.season_features`).
3. The transfer model (the reporting counties' year mean plus boosted trees on each county's
   departure from it, from its soil, calendar and weather relative to the year's;
   `cropbench_models.transfer_fit_predict`), bagged over 6 bootstrap samples of the reporting
   counties (`cropbench_models.bagged_transfer`): with few counties, one unlucky county should
   not steer the trees.
4. Report an estimate of both metrics: the same bagged model with every third reporting county
   withheld.
"""

from __future__ import annotations

import numpy as np
from annotator_common import write_answer, write_artifact
from cropbench_annotator import KEY, feature_columns, owed_rows, read_query
from cropbench_models import bagged_transfer
from metrics import r2, rmse

TARGET = "yield_t_ha"
ROUNDS = 6  # bootstrap rounds: enough to steady the trees, few enough to stay fast
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d"]


def main() -> None:
    """Predict the non-reporting counties; write the artifact and the estimates."""
    scope, artifact, panel, entities = read_query(DAILY, TARGET)
    features = feature_columns(panel)
    owed = owed_rows(panel, TARGET)
    panel["yield_pred_t_ha"] = np.nan
    panel.loc[owed, "yield_pred_t_ha"] = bagged_transfer(panel, entities, ~owed, owed, TARGET, features, ROUNDS)
    public = sorted(panel.loc[~owed, KEY].unique())
    check = panel[KEY].isin(public[::3]).to_numpy() & ~owed
    estimate = bagged_transfer(panel, entities, ~owed & ~check, check, TARGET, features, ROUNDS)
    held = panel[check].assign(estimate=estimate)
    write_artifact(panel[owed], artifact)
    write_answer(metrics={"rmse_t_ha": rmse(held[TARGET], held["estimate"]), "r2": r2(held[TARGET], held["estimate"])})


if __name__ == "__main__":
    main()
