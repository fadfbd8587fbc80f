"""Annotator reproduction: transfer a pooled rainfall-runoff model to basins with short records.

Method (the gold; the prompt leaves the learner to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`) plus
   the staged static attributes.
2. Source model: one gradient-boosted ensemble over all basins' short records, fitted on runoff
   scaled by each basin's mean precipitation (the scale is known from forcing over the whole
   scope, so it needs no streamflow), shallow trees for the small sample.
3. Target adaptation: per basin, a least-squares line that maps the pooled simulation to the
   basin's own observed flow on its public days, shrunk halfway to the identity (too few days for
   a full refit).
4. Estimate: the same procedure with the last 20 % of the public days held out.

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

import numpy as np
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import (
    attributed_features,
    median_of,
    pooled,
    precipitation_scale,
    read_query,
    scores,
    validation_split,
)

SHRINK = 0.5


def transfer(features, q, scale, fit: np.ndarray, predict: np.ndarray) -> np.ndarray:
    """Pooled simulation of the `predict` rows, recalibrated per basin on the `fit` rows."""
    rows = fit | predict
    sim = np.zeros(len(q.obs))
    sim[rows] = pooled(features, q.obs, scale, max_iter=100, max_leaf_nodes=8,
                       min_samples_leaf=40)(fit, rows)
    out = sim.copy()
    for basin in np.unique(q.basins[predict]):
        own = q.basins == basin
        x, y = sim[fit & own], q.obs[fit & own]
        if len(x) > 30 and np.ptp(x) > 0:
            slope, intercept = np.polyfit(x, y, 1)
            slope, intercept = 1 + SHRINK * (slope - 1), SHRINK * intercept
            out[own] = slope * sim[own] + intercept
    return np.clip(out[predict], 0.0, None)


def main() -> None:
    """Simulate the test period; write the artifact and answer.json."""
    q = read_query(FORCING)
    features = attributed_features(q)
    scale = precipitation_scale(q.frame, q.key)
    early, late = validation_split(q.frame["date"], q.train)
    check_sim = transfer(features, q, scale, early, late)
    check = scores(q.obs[late], check_sim, q.basins[late])
    errors = (check_sim - q.obs[late])[~np.isnan(q.obs[late])]
    q.write_rows(q.test, {"qsim_mm_d": transfer(features, q, scale, q.train, q.test)})
    write_answer(metrics={"median_kge": median_of(check, "kge"),
                          "rmse_mm_d": round(float(np.sqrt(np.mean(errors**2))), 6)})


if __name__ == "__main__":
    main()
