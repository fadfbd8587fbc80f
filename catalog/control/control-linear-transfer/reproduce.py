"""Annotator reproduction: pooled regression of y on covariates and attributes, applied to unobserved series.

Method (the gold; the prompt leaves the method to the agent):
1. Over every public series-day, ordinary least squares of y on [1, x1..x5, a1, a2, a3] (one model
   for all series: the covariate effects are shared, the attributes set each series' level).
2. Predict every day of each held-out series from its covariates and attributes.
3. Estimate of the metrics: each public series left out in turn, predicted by the model of the
   others.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from control_annotator import ATTRIBUTES, DRIVERS, nse, ols, ols_predict, read_query, rmse, write_outputs

INPUTS = [*DRIVERS, *ATTRIBUTES]


def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """Pooled OLS of y on covariates and attributes fitted on `train`, applied to `test`."""
    return ols_predict(ols(train[INPUTS].to_numpy(), train["y"].to_numpy()), test[INPUTS].to_numpy())


def main() -> None:
    scope, artifact, series, entities = read_query()
    key = scope["entity_key"]
    frame = series.merge(entities[[key, *ATTRIBUTES]], on=key, how="left")
    held = frame[key].isin(artifact["rows"]["entities"])
    public = frame[~held].dropna(subset=["y"])
    test = frame[held]
    checks = []
    for entity in sorted(public[key].unique()):
        own = public[key] == entity
        checks.append((public.loc[own, "y"].to_numpy(), predict(public[~own], public[own])))
    out = pd.DataFrame({key: test[key], "date": test["date"], "y_pred": predict(public, test)})
    obs, sim = np.concatenate([c[0] for c in checks]), np.concatenate([c[1] for c in checks])
    write_outputs(out, artifact, {"rmse": rmse(obs, sim), "median_nse": float(np.median([nse(*c) for c in checks]))})


if __name__ == "__main__":
    main()
