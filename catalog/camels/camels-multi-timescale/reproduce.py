"""Annotator reproduction: a daily simulation reconciled with a monthly water-balance model.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`).
2. Daily model: a gradient-boosted ensemble per basin, fitted before the test period.
3. Monthly model: per basin, ordinary least squares of the calendar-month mean flow on the
   month's mean routed soil-bucket runoff and antecedent liquid input (the slow water balance).
4. Reconciliation (downscaling the monthly volume): each month's daily simulation is scaled
   halfway towards the monthly model's mean, so daily timing comes from the daily model and
   monthly volume from both.
5. Estimates: the same procedure fitted on the first 80 % of the training days, scored on the
   rest at the three timescales.

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import featurize, local, read_query, validation_split
from metrics import nse

MONTHLY_INPUTS = ["runoff_150_ewm_60", "runoff_400_ewm_60", "liquid_ewm_30", "liquid_ewm_120", "pet_ewm_30"]
BLEND = 0.5


def reconciled(features, q, fit: np.ndarray, predict: np.ndarray) -> np.ndarray:
    """Daily simulation of the `predict` rows with monthly volumes blended with a monthly model."""
    daily = np.zeros(len(q.obs))
    daily[predict] = local(features, q.obs, q.basins, max_iter=100)(fit, predict)
    month = q.frame["date"].dt.to_period("M").to_numpy()
    for basin in np.unique(q.basins[predict]):
        own = q.basins == basin
        table = features.loc[own, MONTHLY_INPUTS].assign(q=np.where(fit[own], q.obs[own], np.nan),
                                                          month=month[own])
        monthly = table.groupby("month").mean()
        train = monthly.dropna()
        x = np.column_stack([np.ones(len(train)), train[MONTHLY_INPUTS].to_numpy()])
        coef = np.linalg.lstsq(x, train["q"].to_numpy(), rcond=None)[0]
        volume = pd.Series(np.column_stack([np.ones(len(monthly)), monthly[MONTHLY_INPUTS].to_numpy()]) @ coef,
                           index=monthly.index).clip(lower=0.0)
        rows = predict & own
        sim = pd.Series(daily[rows], index=month[rows])
        mean = sim.groupby(level=0).transform("mean")
        target = volume.reindex(sim.index).to_numpy()
        factor = np.where(mean > 0, (1 - BLEND) + BLEND * target / mean.where(mean > 0, 1.0), 1.0)
        daily[rows] = sim.to_numpy() * factor
    return np.clip(daily[predict], 0.0, None)


def timescale_nse(obs: np.ndarray, sim: np.ndarray, basins: np.ndarray, dates: pd.Series, rule: str | None) -> float:
    """Median per-basin NSE of `rule` period means ('W', 'M') or days (None) of observed days."""
    frame = pd.DataFrame({"b": basins, "o": obs, "s": sim, "p": dates.dt.to_period(rule) if rule else dates})
    frame = frame.dropna(subset=["o"]).groupby(["b", "p"])[["o", "s"]].mean().reset_index()
    values = [nse(g["o"].to_numpy(), g["s"].to_numpy()) for _, g in frame.groupby("b") if g["o"].std() > 0]
    return round(float(np.median(values)), 6)


def main() -> None:
    """Simulate the test period; write the artifact and answer.json."""
    q = read_query(FORCING)
    features = featurize(q.frame, q.key)
    early, late = validation_split(q.frame["date"], q.train)
    check = reconciled(features, q, early, late)
    dates = q.frame["date"][late].reset_index(drop=True)
    q.write_rows(q.test, {"qsim_mm_d": reconciled(features, q, q.train, q.test)})
    write_answer(metrics={f"median_nse_{name}": timescale_nse(q.obs[late], check, q.basins[late], dates, rule)
                          for name, rule in (("daily", None), ("weekly", "W"), ("monthly", "M"))})


if __name__ == "__main__":
    main()
