"""Annotator reproduction: stratified estimation of unmonitored series.

Method (the gold; the prompt leaves the method to the agent):
1. Strata: k-means on the attributes a1-a3 (z-scored) of every series in scope, monitored or not,
   k = 2..6 chosen by the mean silhouette.
2. Per stratum, a seasonal mean: least squares of the monitored series' y on [1, sin, cos] of the
   day of year; every unmonitored series gets its stratum's curve (all monitored series together
   when its stratum has none).
3. Estimate of the metrics: each monitored series left out in turn and estimated from the others.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer, write_artifact
from control_annotator import ATTRIBUTES, best_partition, read_query, zscore
from control_series import harmonic_fit, harmonic_predict
from metrics import rmse


def estimate(sample: pd.DataFrame, strata: pd.Series, entity: str, dates: pd.Series, key: str) -> np.ndarray:
    """The seasonal mean of the monitored series of `entity`'s stratum (of all of them without one)."""
    same = sample[sample[key].map(strata) == strata[entity]]
    pool = same if len(same) else sample
    return harmonic_predict(harmonic_fit(pool["date"], pool["y"].to_numpy(dtype=float)), dates)


def main() -> None:
    scope, artifact, series, entities = read_query()
    key = scope["entity_key"]
    strata = pd.Series(best_partition(zscore(entities.set_index(key)[ATTRIBUTES]))[0], index=entities[key])
    unmonitored = set(artifact["rows"]["entities"])
    sample = series[~series[key].isin(unmonitored)].dropna(subset=["y"])
    rows = [pd.DataFrame({key: entity, "date": group["date"],
                          "y_est": estimate(sample, strata, entity, group["date"], key)})
            for entity, group in series[series[key].isin(unmonitored)].groupby(key, sort=True)]
    obs, sim = [], []
    for entity, group in sample.groupby(key, sort=True):
        obs.append(group["y"].to_numpy())
        sim.append(estimate(sample[sample[key] != entity], strata, entity, group["date"], key))
    obs, sim = np.concatenate(obs), np.concatenate(sim)
    write_artifact(pd.concat(rows, ignore_index=True), artifact)
    write_answer(metrics={"rmse": rmse(obs, sim), "mae": float(np.mean(np.abs(obs - sim)))})


if __name__ == "__main__":
    main()
