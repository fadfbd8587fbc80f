"""Annotator reproduction: k-means on the prompt's yield-record features.

Method (the gold): `cropbench_runs.cluster_profiles` on each county's reported yields in year
order: mean, coefficient of variation (population sd / |mean|), least-squares trend per year and
lag-1 autocorrelation, z-scored across counties (population sd; constant features become 0;
`cropbench_models.profile_space`, an implementation of its own of the prompt's definitions);
the k-means partition (k = 2 .. 6) of the highest mean silhouette.

Deterministic: fixed `random_state`; single-threaded under OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from cropbench_runs import cluster_profiles  # noqa: E402

FEATURES = ["mean", "cv", "trend", "lag1"]


def main() -> None:
    """Cluster the scope's counties on their yield records; write the labels and work/answer.json."""
    cluster_profiles("yields", "yield_t_ha", FEATURES)


if __name__ == "__main__":
    main()
