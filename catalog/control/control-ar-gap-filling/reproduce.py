"""Annotator reproduction: fill gaps with their conditional mean under a fitted series model.

Method (the gold; the prompt leaves the method to the agent):
1. Per series, over the observed days: deterministic terms (constant; linear trend; annual
   harmonic) plus AR(p) errors, p = 0..3, chosen jointly by BIC (`control_series.fit_series`).
2. Each gap gets the deterministic part plus the Gaussian conditional mean of the AR residuals
   given the observed days around it (`control_series.fill_gaps`); white noise gets its mean.
3. Estimate of the metrics: runs of 3-20 observed days (about 10 % of them, seeded) hidden
   again and filled the same way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer, write_artifact
from control_annotator import read_query
from control_series import fill_gaps, fit_series
from metrics import rmse

RUN_DAYS = (3, 20)


def pseudo_gaps(observed: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    """Runs of observed days, hidden until `share` of them are."""
    hidden = np.zeros(len(observed), dtype=bool)
    while (hidden & observed).sum() < share * observed.sum():
        length = int(rng.integers(RUN_DAYS[0], RUN_DAYS[1] + 1))
        first = int(rng.integers(0, max(len(observed) - length, 0) + 1))
        hidden[first:first + length] = True
    return hidden & observed


def filled(dates: pd.Series, values: np.ndarray) -> np.ndarray:
    """`values` with every NaN filled by the fitted series model."""
    return fill_gaps(fit_series(dates, values), dates.reset_index(drop=True), values)


def main() -> None:
    scope, artifact, series, _ = read_query()
    key = scope["entity_key"]
    rng = np.random.default_rng(0)
    rows, obs, sim = [], [], []
    for entity, group in series.groupby(key, sort=True):
        values = group["y"].to_numpy(dtype=float)
        missing = np.isnan(values)
        rows.append(pd.DataFrame({key: entity, "date": group["date"].to_numpy()[missing],
                                  "y_fill": filled(group["date"], values)[missing]}))
        hidden = pseudo_gaps(~missing, 0.1, rng)
        obs.append(values[hidden])
        sim.append(filled(group["date"], np.where(hidden, np.nan, values))[hidden])
    obs, sim = np.concatenate(obs), np.concatenate(sim)
    write_artifact(pd.concat(rows, ignore_index=True), artifact)
    write_answer(metrics={"rmse": rmse(obs, sim), "mae": float(np.mean(np.abs(obs - sim)))})


if __name__ == "__main__":
    main()
