"""Annotator reproduction: per-series linear regression of y on the covariates of the day and the day before.

Method (the gold; the prompt leaves the method to the agent):
1. Per series, ordinary least squares of y on [1, x1..x5, and x1..x5 of the previous day] over the
   days where y is public (a covariate can act with a delay; the series' first day has no previous
   day and is left out of the fit).
2. Predict every test day from the covariates of that day and the day before.
3. Estimate of the metrics: the same fit on the first 70 % of the public days, scored on the rest.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer, write_artifact
from control_annotator import LAGGED, ols, ols_predict, read_query, with_lags
from metrics import nse, rmse


def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """OLS of y on the lagged design fitted on `train`, applied to `test`."""
    train = train.dropna(subset=LAGGED)
    return ols_predict(ols(train[LAGGED].to_numpy(), train["y"].to_numpy()), test[LAGGED].to_numpy())


def main() -> None:
    scope, artifact, series, _ = read_query()
    key = scope["entity_key"]
    first = pd.Timestamp(artifact["rows"]["from"])
    rows, checks = [], []
    for entity, group in with_lags(series, key).groupby(key, sort=True):
        public, test = group[group["date"] < first].dropna(subset=["y"]), group[group["date"] >= first]
        rows.append(pd.DataFrame({key: entity, "date": test["date"], "y_pred": predict(public, test)}))
        cut = int(0.7 * len(public))
        check = public.iloc[cut:]
        checks.append((check["y"].to_numpy(), predict(public.iloc[:cut], check)))
    obs, sim = np.concatenate([c[0] for c in checks]), np.concatenate([c[1] for c in checks])
    write_artifact(pd.concat(rows, ignore_index=True), artifact)
    write_answer(metrics={"rmse": rmse(obs, sim), "median_nse": float(np.median([nse(o, s) for o, s in checks]))})


if __name__ == "__main__":
    main()
