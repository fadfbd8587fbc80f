"""Annotator reproduction: k-means on the prompt's flow-regime features, k chosen by silhouette.

Method (the gold):
1. Read the scope and artifact blocks; keep the scope's basins and days.
2. The prompt's six features per basin over its observed days (`camels_annotator.basin_profile`),
   standardised across the basins (population sd; zero spread -> 0).
3. k-means (50 restarts, seed 0) for k = 2 .. 6; keep the k with the highest mean silhouette.

Deterministic: fixed `random_state`; k-means single-threaded under OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402
from camels_annotator import (  # noqa: E402
    best_partition,
    profile_space,
    read_artifact_spec,
    read_scope,
    read_timeseries,
    write_answer,
)

FEATURES = ["mean", "cv", "q10", "q90", "lag1", "seasonal_amplitude"]


def main() -> None:
    """Cluster the scope's basins; write the labels and work/answer.json."""
    prompt = Path("prompt.md")
    scope, artifact = read_scope(prompt), read_artifact_spec(prompt)
    frame = read_timeseries(Path("data"), scope, ["qobs_mm_d"])
    space = profile_space(frame, scope["entity_key"], "qobs_mm_d", FEATURES)
    labels, score = best_partition(space.to_numpy())
    Path("work").mkdir(exist_ok=True)
    pd.DataFrame({scope["entity_key"]: space.index, "cluster": labels.astype(int)}).to_parquet(
        Path("work") / artifact["file"], index=False)
    write_answer({"silhouette": round(score, 6)})


if __name__ == "__main__":
    main()
