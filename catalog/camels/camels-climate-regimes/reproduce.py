"""Annotator reproduction: k-means on the prompt's precipitation-climate features, k chosen by silhouette.

Method (the gold):
1. Read the scope and artifact blocks; keep the scope's basins and days.
2. The prompt's five features per basin over its observed days (`camels_annotator.basin_profile`),
   standardised across the basins (population sd; zero spread -> 0).
3. k-means (50 restarts, seed 0) for k = 2 .. 6; keep the k with the highest mean silhouette.

Deterministic: fixed `random_state`; k-means single-threaded under OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from camels_annotator import cluster_profiles  # noqa: E402

FEATURES = ["mean", "cv", "q90", "lag1", "seasonal_amplitude"]


def main() -> None:
    """Cluster the scope's basins on the prcp_mm_d profile; write the labels and work/answer.json."""
    cluster_profiles("prcp_mm_d", FEATURES)


if __name__ == "__main__":
    main()
