"""Annotator reproduction: one model over the gauged basins, applied to the ungauged ones.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`) plus
   every staged static attribute.
2. One gradient-boosted ensemble over the gauged basins' observed days, fitted on runoff scaled
   by each basin's mean precipitation (known for ungauged basins from their forcing), rescaled
   on output for every day of the ungauged basins.
3. Estimate: the same model with a seeded 30 % of the gauged basins treated as ungauged.

Deterministic: fixed seeds and `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

from annotator_common import write_answer
from camels_models import median_of, pooled, precipitation_scale, run_ungauged


def main() -> None:
    """Simulate the ungauged basins with one pooled model; write the artifact and answer.json."""
    estimate, _ = run_ungauged(lambda q, features, _: pooled(features, q.obs, precipitation_scale(q.frame, q.key),
                                                             max_iter=150))
    write_answer(metrics={"median_nse": median_of(estimate, "nse"), "median_kge": median_of(estimate, "kge")})


if __name__ == "__main__":
    main()
