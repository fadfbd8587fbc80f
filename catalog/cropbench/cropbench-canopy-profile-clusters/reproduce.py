"""Annotator reproduction: k-means on the prompt's canopy-seasonality features of daily NDVI.

Method (the gold): `cropbench_runs.cluster_profiles` on the scope's non-null daily `ndvi_interp`
per county, in date order: mean, population sd, 10 % and 90 % quantiles and the range of the
calendar-month means, each z-scored across counties (`cropbench_models.profile_space`, an
implementation of its own of the prompt's definitions); the k-means partition (k = 2 .. 6) of
the highest mean silhouette.

Deterministic: fixed `random_state`; single-threaded under OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from cropbench_runs import cluster_profiles  # noqa: E402

FEATURES = ["mean", "std", "q10", "q90", "seasonal_amplitude"]


def main() -> None:
    """Cluster the scope's counties on their NDVI seasonality; write the labels and work/answer.json."""
    cluster_profiles("timeseries", "ndvi_interp", FEATURES)


if __name__ == "__main__":
    main()
