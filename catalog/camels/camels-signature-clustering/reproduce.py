"""Annotator reproduction: cluster basins in the signature space the prompt defines.

Method (the gold):
1. Read the scope and artifact blocks of `prompt.md`; keep only the scope's basins and dates.
2. Compute the six signatures exactly as the prompt defines them (an implementation of its own,
   not the harness's): ln mean flow, runoff ratio, Lyne-Hollick baseflow index (alpha = 0.925,
   gaps linearly interpolated, ends held), days per year above 9 x median flow, ln(0.01 + Q5),
   ln(0.01 + Q95); standardise each across the basins (population sd; constant ones become 0).
3. k-means (k-means++, 50 restarts, fixed seed) for k = 2 .. min(6, n_basins - 1); keep the k with
   the highest mean silhouette (Euclidean, same space); ties go to the smaller k.
4. Write the labels as the artifact and report their silhouette.

Deterministic: fixed `random_state`; k-means runs single-threaded under OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from annotator_common import read_artifact_spec, read_scope, write_answer, write_artifact  # noqa: E402
from camels_annotator import read_timeseries  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.metrics import silhouette_score  # noqa: E402

ALPHA = 0.925


def baseflow_index(flow: np.ndarray) -> float:
    """Lyne-Hollick one-pass filter: baseflow / total flow."""
    quick = 0.0
    base = 0.0
    for t in range(len(flow)):
        if t > 0:
            quick = min(max(ALPHA * quick + (1 + ALPHA) / 2 * (flow[t] - flow[t - 1]), 0.0), flow[t])
        base += flow[t] - quick
    return base / flow.sum()


def signatures(basin: pd.DataFrame) -> list[float]:
    """The prompt's six signatures of one basin (date order)."""
    flow = basin["qobs_mm_d"]
    seen = flow.notna()
    q = flow[seen].to_numpy(dtype=float)
    median = np.median(q)
    return [
        np.log(q.mean()),
        q.mean() / basin.loc[seen, "prcp_mm_d"].mean(),
        baseflow_index(flow.interpolate(limit_direction="both").to_numpy(dtype=float)),
        (q > 9 * median).sum() / len(q) * 365.25,
        np.log(0.01 + np.quantile(q, 0.05)),
        np.log(0.01 + np.quantile(q, 0.95)),
    ]


def main() -> None:
    """Cluster the scope's basins; write the labels and work/answer.json."""
    scope, artifact = read_scope(), read_artifact_spec()
    frame = read_timeseries(Path("data"), scope, ["prcp_mm_d", "qobs_mm_d"])
    gauges, rows = [], []
    for gauge, basin in frame.groupby(scope["entity_key"], sort=True):
        gauges.append(gauge)
        rows.append(signatures(basin.reset_index(drop=True)))
    raw = np.array(rows)
    spread = raw.std(axis=0)
    space = (raw - raw.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    best = None
    for k in range(2, min(6, len(gauges) - 1) + 1):
        labels = KMeans(n_clusters=k, n_init=50, random_state=0).fit_predict(space)
        score = silhouette_score(space, labels)
        if best is None or score > best[0] + 1e-12:
            best = (score, k, labels)
    score, k, labels = best
    write_artifact(pd.DataFrame({"gauge_id": gauges, "cluster": labels.astype(int)}), artifact)
    write_answer(metrics={"silhouette": round(float(score), 6)})


if __name__ == "__main__":
    main()
