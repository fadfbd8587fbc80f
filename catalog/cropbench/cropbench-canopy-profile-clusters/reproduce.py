"""Annotator reproduction: k-means on the prompt's canopy-seasonality features of daily NDVI.

Method (the gold):
1. Read the scope and artifact blocks; keep the scope's counties and dates.
2. Per county, over its non-null daily `ndvi_interp` in date order: mean, population sd, 10 % and
   90 % quantiles and the range of the calendar-month means, each z-scored across counties
   (`cropbench_models.profile_space`, an implementation of its own of the prompt's definitions).
3. k-means (k-means++, 50 restarts, fixed seed) for k = 2 .. min(6, n - 1); keep the k of the
   highest mean silhouette (Euclidean, same space); ties go to the smaller k.

Deterministic: fixed `random_state`; single-threaded under OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402
from cropbench_annotator import KEY, read_artifact_spec, read_scope, read_table, write_answer  # noqa: E402
from cropbench_models import best_kmeans, profile_space  # noqa: E402

FEATURES = ["mean", "std", "q10", "q90", "seasonal_amplitude"]


def main() -> None:
    """Cluster the scope's counties; write the labels and work/answer.json."""
    prompt = Path("prompt.md")
    scope, artifact = read_scope(prompt), read_artifact_spec(prompt)
    series = read_table(Path("data"), "timeseries", scope, [KEY, "date", "ndvi_interp"])
    space = profile_space(series, "date", "ndvi_interp", FEATURES)
    labels, score = best_kmeans(space)
    Path("work").mkdir(exist_ok=True)
    pd.DataFrame({KEY: space.index, "cluster": labels.astype(int)}).to_parquet(
        Path("work") / artifact["file"], index=False)
    write_answer({"silhouette": score})


if __name__ == "__main__":
    main()
