"""Annotator reproduction: a streamflow simulation fitted for the extreme high flows.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`).
2. A gradient-boosted ensemble per basin, fitted before the test period with each day weighted
   in proportion to its flow relative to the basin's mean ((q / mean + 0.1) ** 1): the extremes,
   rare in the record, dominate the fit as they dominate the evaluation stratum.
3. Estimates: the same model fitted on the first 80 % of the training days, scored on the rest's
   high-flow strata (90 % and 99 % quantiles of the validation days).

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

import numpy as np
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import featurize, local, read_query, validation_split
from metrics import nse

WEIGHT_POWER = 1.0


def stratum_scores(obs: np.ndarray, sim: np.ndarray, basins: np.ndarray) -> tuple[float, float]:
    """(median NSE above each basin's 90 % quantile, pooled MAE above its 99 % quantile)."""
    nses, errors = [], []
    for basin in np.unique(basins):
        own = (basins == basin) & ~np.isnan(obs)
        if own.sum() < 20:
            continue
        high = own & (obs >= np.quantile(obs[own], 0.9))
        if np.ptp(obs[high]) > 0:
            nses.append(nse(obs[high], sim[high]))
        peak = own & (obs >= np.quantile(obs[own], 0.99))
        errors.extend(np.abs(sim[peak] - obs[peak]))
    return round(float(np.median(nses)), 6), round(float(np.mean(errors)), 6)


def main() -> None:
    """Simulate the test period; write the artifact and answer.json."""
    q = read_query(FORCING)
    simulate = local(featurize(q.frame, q.key), q.obs, q.basins, weight_power=WEIGHT_POWER)
    early, late = validation_split(q.frame["date"], q.train)
    high_nse, peak_mae = stratum_scores(q.obs[late], simulate(early, late), q.basins[late])
    q.write_rows(q.test, {"qsim_mm_d": simulate(q.train, q.test)})
    write_answer(metrics={"high_flow_nse": high_nse, "peak_mae_mm_d": peak_mae})


if __name__ == "__main__":
    main()
