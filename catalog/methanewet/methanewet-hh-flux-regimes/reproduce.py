"""Annotator reproduction: partition wetland sites by the statistics of their half-hourly methane flux.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's sites and their observed half-hourly flux.
2. Per site, the prompt's profile features of `fch4_nmol_m2_s` over its observed intervals in
   time order (`profile_features`: mean, standard deviation, coefficient of variation, 10 % and
   90 % quantiles, lag-1 autocorrelation of consecutive observed values), z-scored across sites.
3. k-means with k = 2..6 (20 initialisations each, seeded); the partition with the highest mean
   silhouette is the answer (`best_partition`).

Deterministic: fixed random_state, single thread.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from annotator_common import read_artifact_spec, read_scope, write_answer, write_artifact
from methanewet_annotator import KEY, TARGET, best_partition, profile_features
from methanewet_halfhourly import TIME, read_halfhourly

FEATURES = ["mean", "std", "cv", "q10", "q90", "lag1"]


def main() -> None:
    """Partition the sites of the query in the current directory; write the artifact."""
    data = Path("data")
    scope, artifact = read_scope(), read_artifact_spec()
    frame = read_halfhourly(data, scope)
    frame = frame.assign(date=frame[TIME].dt.tz_localize(None))
    space = profile_features(frame[frame[TARGET].notna()], TARGET, FEATURES)
    labels, silhouette = best_partition(space)
    write_artifact(pd.DataFrame({KEY: space.index, next(iter(artifact["columns"])): labels}), artifact)
    write_answer(metrics={"silhouette": silhouette})


if __name__ == "__main__":
    main()
