"""Annotator reproduction: a streamflow simulation fitted with high flows weighted up.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`).
2. A gradient-boosted ensemble per basin, fitted before the test period with each day weighted
   by (flow / mean flow + 0.1) ** 0.5, so the fit does not trade peak volume for small errors on
   the many low-flow days (Mizukami et al. 2019 show the squared-error fit underestimates peaks).
3. Estimates: the same model fitted on the first 80 % of the training days, scored on the rest
   (high-flow days: at or above the 95 % quantile of the validation days).

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

import numpy as np
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import featurize, local, median_of, read_query, scores, validation_split

WEIGHT_POWER = 0.5


def high_flow_errors(obs: np.ndarray, sim: np.ndarray, basins: np.ndarray) -> list[float]:
    """|sum(sim - obs)| / sum(obs) per basin over its days at or above its 95 % flow quantile."""
    errors = []
    for basin in np.unique(basins):
        own = (basins == basin) & ~np.isnan(obs)
        high = own & (obs >= np.quantile(obs[own], 0.95)) if own.any() else own
        if high.any() and obs[high].sum() > 0:
            errors.append(abs(np.sum(sim[high] - obs[high])) / obs[high].sum())
    return errors


def main() -> None:
    """Simulate the test period; write the artifact and answer.json."""
    q = read_query(FORCING)
    simulate = local(featurize(q.frame, q.key), q.obs, q.basins, weight_power=WEIGHT_POWER)
    early, late = validation_split(q.frame["date"], q.train)
    check_sim = simulate(early, late)
    q.write_rows(q.test, {"qsim_mm_d": simulate(q.train, q.test)})
    write_answer(metrics={"high_flow_volume_error": round(float(np.median(high_flow_errors(
                              q.obs[late], check_sim, q.basins[late]))), 6),
                          "median_kge": median_of(scores(q.obs[late], check_sim, q.basins[late]), "kge")})


if __name__ == "__main__":
    main()
