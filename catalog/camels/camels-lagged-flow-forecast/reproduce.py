"""Annotator reproduction: a rainfall-runoff simulation corrected by the last observed discharge.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`).
2. Simulation: a gradient-boosted ensemble per basin fitted on the days before the forecast.
3. Data integration: the simulation's log error over the last 7 observed days before the
   forecast period is carried into the forecast and decays with lead time h as exp(-h / tau);
   tau (5 to 80 days) is chosen per query on a pseudo forecast period (the same length, just
   before the real one); the simulation is fitted once, without that period.

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import featurize, local, median_of, read_query, scores

TAUS = (5.0, 10.0, 20.0, 40.0, 80.0)


def corrected(q, sim: np.ndarray, first: pd.Timestamp, rows: np.ndarray, tau: float) -> np.ndarray:
    """Simulation of `rows` (from `first` on) shifted by the decaying initial log error."""
    out = sim.copy()
    dates = q.frame["date"]
    for basin in np.unique(q.basins[rows]):
        own = q.basins == basin
        eps = max(0.01, 0.01 * np.nanmean(q.obs[own]))
        before = own & (dates < first).to_numpy() & ~np.isnan(q.obs)
        recent = np.flatnonzero(before)[-7:]
        error = np.mean(np.log(q.obs[recent] + eps) - np.log(sim[recent] + eps)) if len(recent) else 0.0
        lead = (dates[rows & own] - first).dt.days.to_numpy() + 1
        out[rows & own] = (sim[rows & own] + eps) * np.exp(error * np.exp(-lead / tau)) - eps
    return np.clip(out[rows], 0.0, None)


def main() -> None:
    """Forecast the withheld period; write the artifact and answer.json."""
    q = read_query(FORCING)
    simulate = local(featurize(q.frame, q.key), q.obs, q.basins, max_iter=80)
    first = pd.Timestamp(q.artifact["rows"]["from"])
    length = pd.Timedelta(days=int(q.test[q.basins == q.basins[0]].sum()))
    dates = q.frame["date"]
    pseudo = ((dates >= first - length) & (dates < first)).to_numpy()
    everything = np.ones(len(q.obs), dtype=bool)
    sim = np.zeros(len(q.obs))
    sim[everything] = simulate(q.train & ~pseudo, everything)  # one fit serves tau and the forecast
    trials = {tau: scores(q.obs[pseudo], corrected(q, sim, first - length, pseudo, tau), q.basins[pseudo])
              for tau in TAUS}
    tau = max(TAUS, key=lambda t: trials[t]["nse"].median())
    q.write_rows(q.test, {"qfc_mm_d": corrected(q, sim, first, q.test, tau)})
    write_answer(metrics={"median_nse": median_of(trials[tau], "nse"), "median_kge": median_of(trials[tau], "kge")})


if __name__ == "__main__":
    main()
