"""Annotator reproduction: county yields from six training seasons, stabilised by the bootstrap.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Season features from the daily weather placed by the crop calendar
   (`cropbench_annotator.season_features`); a compact set (degree days, extreme heat, season and
   silking water balance, silking VPD, spring warmth), as six seasons cannot carry many.
3. Panel model (county fixed effects, a common trend, ridge with a strong penalty) refitted on 15
   bootstrap resamples of the training seasons (whole seasons drawn with replacement, seeded);
   the predictions are averaged.
4. Report an estimate of the RMSE from the last training season held out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer, write_artifact
from cropbench_annotator import YEAR, owed_rows, read_query
from cropbench_models import panel_fit_predict
from metrics import rmse

TARGET = "yield_t_ha"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d"]
FEATURES = ["gdd", "edd", "season_cwb", "silking_cwb", "silking_vpd", "spring_tavg_c"]
ROUNDS = 15


def bagged(panel: pd.DataFrame, train: np.ndarray, test: np.ndarray) -> np.ndarray:
    """Average of the panel model over bootstrap resamples of the training seasons."""
    rng = np.random.default_rng(0)
    years = np.sort(panel.loc[train, YEAR].unique())
    new = panel[test]
    total = np.zeros(len(new))
    for _ in range(ROUNDS):
        draw = rng.choice(years, size=len(years), replace=True)
        sample = pd.concat([*(panel[train & (panel[YEAR] == y).to_numpy()] for y in draw), new], ignore_index=True)
        inside = np.arange(len(sample)) < len(sample) - len(new)
        total += panel_fit_predict(sample, inside, ~inside, TARGET, FEATURES, learner=None, alpha=20.0)
    return total / ROUNDS


def main() -> None:
    """Predict the withheld years; write the artifact and the estimate."""
    scope, artifact, panel, _ = read_query(DAILY, TARGET)
    owed = owed_rows(panel, TARGET)
    panel["yield_pred_t_ha"] = np.nan
    panel.loc[owed, "yield_pred_t_ha"] = bagged(panel, ~owed, owed)
    last = panel.loc[~owed, YEAR].max()
    check = ~owed & (panel[YEAR] == last).to_numpy()
    write_artifact(panel[owed], artifact)
    write_answer(metrics={"rmse_t_ha": rmse(panel.loc[check, TARGET], bagged(panel, ~owed & ~check, check))})


if __name__ == "__main__":
    main()
