"""Annotator reproduction: per-series linear regression and random forest on the day's and the
previous day's covariates.

Method (the gold; the prompt leaves the method to the agent):
1. Per series, ordinary least squares of y on [1, x1..x5, x1..x5 of the previous day] and a random
   forest (40 trees, leaves of at least 5 days, seed 0, one thread) on the same ten inputs, both
   fitted on the days where y is public (the series' first day has no previous day: left out).
2. Predict every test day with both.
3. Estimate of the metrics: the linear model fitted on the first 70 % of the public days and
   scored on the rest; the forest's out-of-bag predictions of the public days.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer, write_artifact
from control_annotator import LAGGED, ols, ols_predict, read_query, with_lags
from metrics import rmse
from sklearn.ensemble import RandomForestRegressor


def forest(train: pd.DataFrame) -> RandomForestRegressor:
    """A random forest of y on the covariates, with out-of-bag predictions of its training days."""
    model = RandomForestRegressor(n_estimators=40, min_samples_leaf=5, oob_score=True, random_state=0, n_jobs=1)
    return model.fit(train[LAGGED].to_numpy(), train["y"].to_numpy())


def linear(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """OLS of y on the covariates fitted on `train`, applied to `test`."""
    return ols_predict(ols(train[LAGGED].to_numpy(), train["y"].to_numpy()), test[LAGGED].to_numpy())


def main() -> None:
    scope, artifact, series, _ = read_query()
    key = scope["entity_key"]
    first = pd.Timestamp(artifact["rows"]["from"])
    rows, linear_checks, forest_checks = [], [], []
    for entity, group in with_lags(series, key).groupby(key, sort=True):
        public = group[group["date"] < first].dropna(subset=["y", *LAGGED])
        test = group[group["date"] >= first]
        trees = forest(public)
        rows.append(pd.DataFrame({key: entity, "date": test["date"], "y_linear": linear(public, test),
                                  "y_forest": trees.predict(test[LAGGED].to_numpy())}))
        cut = int(0.7 * len(public))
        linear_checks.append((public["y"].to_numpy()[cut:], linear(public.iloc[:cut], public.iloc[cut:])))
        forest_checks.append((public["y"].to_numpy(), trees.oob_prediction_))
    errors = {name: rmse(np.concatenate([c[0] for c in checks]), np.concatenate([c[1] for c in checks]))
              for name, checks in (("rmse_linear", linear_checks), ("rmse_forest", forest_checks))}
    write_artifact(pd.concat(rows, ignore_index=True), artifact)
    write_answer(metrics=errors)


if __name__ == "__main__":
    main()
