"""Annotator reproduction: a quadratic emulator distilled from a boosted yield model.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Teacher: the panel model on the training years (county fixed effects, trend, ridge and
   boosted trees on every season feature; `cropbench_models.panel_fit_predict`); it labels every
   county-year of the scope, test years included (their weather is an unlabelled input).
3. Student (the emulator): six season variables (degree days, extreme heat, season water balance,
   silking water balance, silking VPD, spring warmth), their squares and pairwise products,
   county intercepts and a linear trend, fitted by ridge to the teacher's labels of every
   county-year (the training years' observed yields where known). It predicts the test years.
4. Report RMSE and median NSE of the same procedure on the last 4 training years held out.
"""

from __future__ import annotations

from itertools import combinations_with_replacement

import numpy as np
import pandas as pd
from cropbench_annotator import KEY, YEAR, feature_columns, read_query
from cropbench_models import panel_fit_predict
from cropbench_runs import holdout_years_run, per_county, pooled
from metrics import nse, rmse

TARGET = "yield_t_ha"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "et0_mm_d", "vpd_hpa", "cwb_mm_d"]
CLIMATE = ["gdd", "edd", "season_cwb", "silking_cwb", "silking_vpd", "spring_tavg_c"]


def emulate(panel: pd.DataFrame, train: np.ndarray, test: np.ndarray) -> np.ndarray:
    """Teacher labels on train + test rows, then the quadratic student fitted to them."""
    rows = train | test
    teacher = panel[TARGET].to_numpy(float).copy()
    teacher[test] = panel_fit_predict(panel, train, test, TARGET, feature_columns(panel))
    z = (panel[CLIMATE] - panel.loc[rows, CLIMATE].mean()) / panel.loc[rows, CLIMATE].std()
    terms = {f"{a}*{b}": z[a] * z[b] for a, b in combinations_with_replacement(CLIMATE, 2)}
    student = pd.concat([panel[[KEY, YEAR]], z, pd.DataFrame(terms)], axis=1)
    student["label"] = teacher
    polynomial = [*CLIMATE, *terms]
    return panel_fit_predict(student, rows, test, "label", polynomial, learner=None, alpha=1.0)


def main() -> None:
    """Emulate the withheld test years; write the artifact and the estimates."""
    scope, artifact, panel, _ = read_query(DAILY, TARGET)
    holdout_years_run(panel, artifact, TARGET, "yield_emulated_t_ha", lambda fit, new: emulate(panel, fit, new),
                      {"rmse_t_ha": pooled(rmse), "median_nse": per_county(nse)}, check_years=4)


if __name__ == "__main__":
    main()
