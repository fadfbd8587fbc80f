"""Annotator reproduction: k-means on the prompt's yield-record features.

Method (the gold):
1. Read the scope and artifact blocks; keep the scope's counties and years.
2. Per county, over its reported yields in year order: mean, coefficient of variation
   (population sd / |mean|), least-squares trend per year and lag-1 autocorrelation, each
   z-scored across counties (population sd; constant features become 0)
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
from cropbench_annotator import KEY, YEAR, read_artifact_spec, read_scope, read_table, write_answer  # noqa: E402
from cropbench_models import best_kmeans, profile_space  # noqa: E402

FEATURES = ["mean", "cv", "trend", "lag1"]


def main() -> None:
    """Cluster the scope's counties; write the labels and work/answer.json."""
    prompt = Path("prompt.md")
    scope, artifact = read_scope(prompt), read_artifact_spec(prompt)
    yields = read_table(Path("data"), "yields", scope, [KEY, YEAR, "yield_t_ha"])
    yields["time"] = pd.to_datetime(yields[YEAR].astype(str) + "-01-01")
    space = profile_space(yields, "time", "yield_t_ha", FEATURES)
    labels, score = best_kmeans(space)
    Path("work").mkdir(exist_ok=True)
    pd.DataFrame({KEY: space.index, "cluster": labels.astype(int)}).to_parquet(
        Path("work") / artifact["file"], index=False)
    write_answer({"silhouette": score})


if __name__ == "__main__":
    main()
