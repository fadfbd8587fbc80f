"""Annotator reproduction: a streamflow simulation whose variability is corrected after fitting.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`).
2. A gradient-boosted ensemble per basin, fitted before the test period (squared error).
3. Variability correction: squared-error fits shrink the simulation towards its mean (alpha < 1;
   Gupta et al. 2009). Per basin, out-of-sample simulations of the training days give the
   ratio std(obs) / std(sim); the simulation's anomalies about its mean are stretched by that ratio (capped at 1.5). The
   out-of-sample simulations come from a model fitted on the first 80 % of the training days.
4. Estimates: the second half of step 3's blocked split, corrected the same way (the stretch is
   fitted there too, so the estimate is slightly optimistic).

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

import numpy as np
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import featurize, local, median_of, read_query, scores, validation_split

MAX_STRETCH = 1.5


def corrected(features, q, fit: np.ndarray, predict: np.ndarray):
    """(simulation of the `predict` rows with each basin's variability restored, validation scores
    of the corrected model fitted on the first 80 % of the `fit` rows)."""
    simulate = local(features, q.obs, q.basins, max_iter=60)
    first, second = validation_split(q.frame["date"], fit)
    sim = np.zeros(len(q.obs))
    sim[second] = simulate(first, second)
    held = sim.copy()
    sim[predict] = simulate(fit, predict)
    for basin in np.unique(q.basins[predict]):
        own, check = q.basins == basin, second & (q.basins == basin)
        spread = np.std(held[check])
        stretch = np.clip(np.std(q.obs[check]) / spread, 1.0, MAX_STRETCH) if spread > 0 else 1.0
        for part in (predict & own, check):
            mean = sim[part].mean()
            sim[part] = mean + stretch * (sim[part] - mean)
    sim = np.clip(sim, 0.0, None)
    return sim[predict], scores(q.obs[second], sim[second], q.basins[second])


def main() -> None:
    """Simulate the test period; write the artifact and answer.json."""
    q = read_query(FORCING)
    simulation, check = corrected(featurize(q.frame, q.key), q, q.train, q.test)
    q.write_rows(q.test, {"qsim_mm_d": simulation})
    write_answer(metrics={f"median_{name}": median_of(check, name) for name in ("kge", "r2", "variability_error")})


if __name__ == "__main__":
    main()
