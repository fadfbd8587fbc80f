"""Annotator reproduction: a streamflow model trained on the whole record vs on its last year.

Method (the gold; the prompt leaves the learner to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`) plus
   the staged static attributes.
2. Whole record: a gradient-boosted ensemble per basin on all of its training days.
3. Last year only: too short for one model per basin, so one ensemble pooled over the scope's
   basins, fitted on runoff scaled by each basin's mean precipitation of that year, on the 365
   days before the test period.
4. Estimates: the same two models with the validation window (last 20 % of the training days)
   in place of the test period: the short one trained on the 365 days before that window.

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

import numpy as np
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import attributed_features, featurize, local, median_of, pooled, read_query, scores, validation_split

YEAR_DAYS = 365


def last_year(dates, train: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Training rows among the 365 days right before the first row of `before`."""
    first = dates[before].min()
    return train & (dates >= first - np.timedelta64(YEAR_DAYS, "D")).to_numpy() & (dates < first).to_numpy()


def main() -> None:
    """Simulate the test period with both training records; write the artifact and answer.json."""
    q = read_query(FORCING)
    dates = q.frame["date"]
    features = featurize(q.frame, q.key)
    pooled_features = attributed_features(q, features)

    def simulate(train: np.ndarray, predict: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        short = last_year(dates, train, predict)
        prcp = q.frame["prcp_mm_d"].where(short).groupby(q.frame[q.key]).transform("mean")
        scale = np.maximum(prcp.fillna(1.0).to_numpy(), 0.1)
        return (local(features, q.obs, q.basins, max_iter=40)(train, predict),
                pooled(pooled_features, q.obs, scale, max_iter=40)(short, predict))

    early, late = validation_split(dates, q.train)
    checks = simulate(early, late)
    full, one_year = simulate(q.train, q.test)
    q.write_rows(q.test, {"qsim_full_mm_d": full, "qsim_one_year_mm_d": one_year})
    write_answer(metrics={name: median_of(scores(q.obs[late], check, q.basins[late]), "nse")
                          for name, check in zip(("median_nse_full", "median_nse_one_year"), checks, strict=True)})


if __name__ == "__main__":
    main()
