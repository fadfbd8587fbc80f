"""Annotator reproduction: the best-separated partition of the series in the graded profile space.

Method (the gold; the prompt leaves the method to the agent):
1. Per series: mean, population sd, lag-1 autocorrelation and calendar-month amplitude of the
   observed y, z-scored across the scope's series (the space the prompt defines).
2. k-means (k-means++, 10 starts, seed 0) for k = 2..6; the k with the highest mean silhouette,
   which is also the reported estimate.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import write_answer, write_artifact
from control_annotator import best_partition, profiles, read_query, zscore


def main() -> None:
    scope, artifact, series, entities = read_query()
    key = scope["entity_key"]
    space = zscore(profiles(series, key, "y"))
    labels, score = best_partition(space)
    write_artifact(pd.DataFrame({key: space.index, "cluster": labels}), artifact)
    write_answer(metrics={"silhouette": score})


if __name__ == "__main__":
    main()
