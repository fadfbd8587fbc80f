"""Annotator reproduction: a regional model pre-trained on all basins, refined per basin.

Method (the gold; the prompt leaves the learner to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`) plus
   the staged static attributes.
2. Pre-training: one gradient-boosted ensemble for all basins of the scope on runoff scaled by
   each basin's mean precipitation.
3. Refinement: per basin, an ensemble on its own training days that reads the pre-trained
   simulation as an extra input (`camels_models.fine_tuned`).
4. Estimates: the same procedure fitted on the first 80 % of the training days, scored on the rest.

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import attributed_features, fine_tuned, median_of, precipitation_scale, read_query


def main() -> None:
    """Simulate the test period; write the artifact and answer.json."""
    q = read_query(FORCING)
    features = attributed_features(q)
    simulate = fine_tuned(features, q.obs, q.basins, precipitation_scale(q.frame, q.key))
    check = q.validate(simulate)
    q.write_rows(q.test, {"qsim_mm_d": simulate(q.train, q.test)})
    write_answer(metrics={"median_nse": median_of(check, "nse"), "median_kge": median_of(check, "kge")})


if __name__ == "__main__":
    main()
