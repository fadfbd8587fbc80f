"""Annotator reproduction: pooled regression of y on covariates and attributes, applied to unobserved series.

Method (the gold; the prompt leaves the method to the agent):
1. Over every public series-day, ordinary least squares of y on [1, x1..x5, x1..x5 of the previous
   day, a1, a2, a3] (one model for all series: the covariate effects, delayed or not, are shared;
   the attributes set each series' level; a series' first day has no previous day and is left out).
2. Predict every day of each held-out series from its covariates and attributes (its first day
   from the pooled model without the previous day's covariates).
3. Estimate of the metrics: each public series left out in turn, predicted by the model of the
   others.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer, write_artifact
from control_annotator import ATTRIBUTES, DRIVERS, LAGGED, ols, ols_predict, read_query, with_lags
from metrics import nse, rmse

INPUTS, SAME_DAY = [*LAGGED, *ATTRIBUTES], [*DRIVERS, *ATTRIBUTES]


def _fit(train: pd.DataFrame, test: pd.DataFrame, inputs: list[str]) -> np.ndarray:
    train = train.dropna(subset=inputs)
    return ols_predict(ols(train[inputs].to_numpy(), train["y"].to_numpy()), test[inputs].to_numpy())


def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """Pooled OLS of y on covariates (and the previous day's) and attributes fitted on `train`,
    applied to `test`; rows of `test` without a previous day get the same-day model."""
    out = _fit(train, test, INPUTS)
    first = test[LAGGED].isna().any(axis=1).to_numpy()
    if first.any():
        out[first] = _fit(train, test[first], SAME_DAY)
    return out


def main() -> None:
    scope, artifact, series, entities = read_query()
    key = scope["entity_key"]
    frame = with_lags(series, key).merge(entities[[key, *ATTRIBUTES]], on=key, how="left")
    held = frame[key].isin(artifact["rows"]["entities"])
    public = frame[~held].dropna(subset=["y"])
    test = frame[held]
    checks = []
    for entity in sorted(public[key].unique()):
        own = public[key] == entity
        checks.append((public.loc[own, "y"].to_numpy(), predict(public[~own], public[own])))
    out = pd.DataFrame({key: test[key], "date": test["date"], "y_pred": predict(public, test)})
    obs, sim = np.concatenate([c[0] for c in checks]), np.concatenate([c[1] for c in checks])
    write_artifact(out, artifact)
    write_answer(metrics={"rmse": rmse(obs, sim), "median_nse": float(np.median([nse(*c) for c in checks]))})


if __name__ == "__main__":
    main()
