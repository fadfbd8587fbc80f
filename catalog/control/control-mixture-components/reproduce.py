"""Annotator reproduction: recover the generating groups of Gaussian-mixture series.

Method (the gold; the prompt leaves the method to the agent):
1. Per series: the attributes a1-a3 and four profile statistics of y (mean, population sd, lag-1
   autocorrelation, calendar-month amplitude), each z-scored across the scope's series.
2. k-means (k-means++, 10 starts, seed 0) for k = 2..6; the k with the highest mean silhouette.
3. Estimate of the adjusted Rand index: the same clustering on the first and on the second half
   of the period, compared with each other.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import write_answer, write_artifact
from control_annotator import ATTRIBUTES, best_partition, profiles, read_query, zscore
from metrics import adjusted_rand


def partition(series: pd.DataFrame, entities: pd.DataFrame, key: str):
    """Cluster labels of the entities (sorted by key) from attributes and the profile of y."""
    features = entities.set_index(key)[ATTRIBUTES].join(profiles(series, key, "y"))
    return best_partition(zscore(features.sort_index()))[0]


def main() -> None:
    scope, artifact, series, entities = read_query()
    key = scope["entity_key"]
    labels = partition(series, entities, key)
    middle = series["date"].min() + (series["date"].max() - series["date"].min()) / 2
    halves = [partition(part, entities, key) for part in (series[series["date"] <= middle],
                                                           series[series["date"] > middle])]
    out = pd.DataFrame({key: sorted(entities[key]), "cluster": labels})
    write_artifact(out, artifact)
    write_answer(metrics={"adjusted_rand": adjusted_rand(*halves)})


if __name__ == "__main__":
    main()
