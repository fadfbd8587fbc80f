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

from pathlib import Path

from camels_annotator import FORCING, write_answer
from camels_models import (
    featurize,
    held_out_masks,
    median_of,
    pooled,
    precipitation_scale,
    pseudo_ungauged,
    read_entities,
    read_query,
    scores,
    with_attributes,
    write_rows,
)


def main() -> None:
    """Simulate the ungauged basins; write the artifact and answer.json."""
    q = read_query(FORCING)
    features = with_attributes(featurize(q.frame, q.key), q.frame,
                               read_entities(Path("data"), q.scope), q.key)
    simulate = pooled(features, q.obs, precipitation_scale(q.frame, q.key), max_iter=150)
    held, public = held_out_masks(q)
    check = pseudo_ungauged(q.basins, public)
    estimate = scores(q.obs[check], simulate(public & ~check, check), q.basins[check])
    write_rows(q.frame, held, q.key, {"qsim_mm_d": simulate(public, held)}, q.artifact)
    write_answer({"median_nse": median_of(estimate, "nse"), "median_kge": median_of(estimate, "kge")})


if __name__ == "__main__":
    main()
