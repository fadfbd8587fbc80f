"""The `partition` family: group entities by standardised signatures of their time series.

Signatures come from `signatures.py` (the ones the prompt names, else a default set), are
standardised across the scope's entities, and partitioned by k-means (k-means++, 30 restarts,
fixed seed) for k = 2 .. min(6, n - 1); the k with the highest mean silhouette wins, ties to the
smaller k. The reported silhouette is that partition's, in the same space.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from heuristic.handin import Handin, metrics_answer  # noqa: E402
from heuristic.profile import Profile, entity_frames, pick_driver  # noqa: E402
from heuristic.prompt import Plan, Prompt  # noqa: E402
from heuristic.signatures import PRECIPITATION, declared, read_settings, signature_table, standardise  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.metrics import silhouette_score  # noqa: E402

MAX_K = 6


def best_partition(space: np.ndarray) -> tuple[np.ndarray, float]:
    """(labels, silhouette) of the best k-means partition by silhouette (two groups at least)."""
    n = len(space)
    if n < 3:
        return np.arange(n) % 2, float("nan")
    best = (np.arange(n) % 2, -np.inf)
    for k in range(2, min(MAX_K, n - 1) + 1):
        labels = KMeans(n_clusters=k, n_init=30, random_state=0).fit_predict(space)
        if len(set(labels)) < 2:
            continue
        score = float(silhouette_score(space, labels))
        if score > best[1] + 1e-12:
            best = (labels, score)
    return best


def attribute_space(profile: Profile) -> pd.DataFrame:
    """Entities described by their static attributes and the mean and spread of each series column."""
    parts = []
    if profile.entities is not None and profile.attributes:
        parts.append(profile.entities[profile.attributes].astype(float))
    if profile.series is not None:
        numeric = [c for c in profile.series.columns if c not in (profile.key, profile.time)]
        grouped = profile.series.groupby(profile.key)[numeric]
        parts += [grouped.mean().add_suffix("_mean"), grouped.std(ddof=0).add_suffix("_std")]
    table = pd.concat(parts, axis=1)
    return standardise(table.loc[:, table.notna().any()].fillna(table.mean()))


def partition(profile: Profile, prompt: Prompt, plan: Plan) -> Handin:
    """Cluster the scope's entities; write one label per entity and report the silhouette.

    Entities are described by signatures of the target's series, or, when the target is not in the
    data (a hidden label), by their attributes and the summary statistics of their series.
    """
    if profile.series is None or profile.target not in profile.series.columns:
        space = attribute_space(profile)
    else:
        names = declared(prompt.identifiers)
        precipitation = pick_driver(profile, PRECIPITATION)
        table = signature_table(entity_frames(profile), profile.target, precipitation, names,
                                read_settings(prompt.text))
        space = standardise(table)
    labels, score = best_partition(space.to_numpy())
    owed = [str(e) for e in prompt.scope["entities"]]
    by_entity = dict(zip(space.index, labels.tolist(), strict=True))
    column = next(iter(prompt.artifact["columns"]))
    frame = pd.DataFrame({prompt.key: owed, column: [by_entity.get(e, 0) for e in owed]})
    answer = {m["name"]: round(score, 6) if "silhouette" in m["name"].lower() + m.get("description", "").lower()
              else None for m in prompt.answer.get("metrics", [])}
    return Handin(frame, metrics_answer(answer))
