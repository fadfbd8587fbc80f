"""Confidence intervals for scores: bootstrap over queries within tasks.

A task's ST-Bench score is `success_rate * pass_rate`, which equals the mean over its scored queries
of `q = pass_rate` (a query's pass rate is 0 unless it is realistic). A resample draws, for every
task, as many queries as it has, with replacement, and recomputes the mean over tasks; the interval
is the percentile interval of the resampled scores. Tasks stay fixed (the benchmark's tasks are
the population a score speaks about); the queries of a task are the sample.

Two agents evaluated on the same queries are compared with a *paired* bootstrap: one draw of query
indices per task serves both, so the interval of the difference reflects the queries' shared
difficulty instead of adding up two independent spreads.

A task with a single scored query has no spread to resample, so an interval over it is not
defined (None, shown as "-"): a point [x, x] would claim a certainty the data do not give. The
`default` profile evaluates one test query per task, so its scores carry no interval; `tiny` and
`full` keep at least 3 test queries per task.

Every draw comes from a generator seeded with `seed`, in sorted task order: the same inputs give
the same interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

DIGITS = 6
MIN_QUERIES = 2  # a task's queries are the sample; one query has no spread


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval, on the 0-100 scale of scores."""

    low: float
    high: float
    level: float
    resamples: int

    def as_dict(self) -> dict:
        """The JSON form: `{low, high, level, resamples}`."""
        return {"low": round(self.low, DIGITS), "high": round(self.high, DIGITS),
                "level": self.level, "resamples": self.resamples}


def task_resamples(per_task: Mapping[str, np.ndarray], resamples: int,
                   seed: int) -> dict[str, np.ndarray | None]:
    """Task id -> `resamples` bootstrap means of its per-query values, on the 0-100 scale.

    Tasks with no scored query are left out (they have no score to resample); a task with one
    query maps to None (nothing to resample: an interval over it is undefined).
    """
    rng = np.random.default_rng(seed)
    means: dict[str, np.ndarray | None] = {}
    for task_id in sorted(per_task):
        values = np.asarray(per_task[task_id], dtype=float)
        if values.size == 0:
            continue
        if values.size < MIN_QUERIES:
            means[task_id] = None
            continue
        draws = rng.integers(0, values.size, size=(resamples, values.size))
        means[task_id] = 100.0 * values[draws].mean(axis=1)
    return means


def interval(samples: np.ndarray, level: float, resamples: int) -> Interval | None:
    """The percentile interval of a vector of resampled scores (None when there is none)."""
    if samples.size == 0:
        return None
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(samples, [tail, 100.0 - tail])
    return Interval(float(low), float(high), level, resamples)


def mean_interval(resampled: Mapping[str, np.ndarray | None], tasks: list[str], level: float,
                  resamples: int) -> Interval | None:
    """The interval of the mean score over `tasks`, or None when one of them has a single query.

    Tasks without a scored query are skipped.
    """
    rows = [resampled[task_id] for task_id in sorted(tasks) if task_id in resampled]
    if not rows or any(row is None for row in rows):
        return None
    return interval(np.mean(np.vstack(rows), axis=0), level, resamples)


def paired_delta(system: Mapping[str, Mapping[str, float]], baseline: Mapping[str, Mapping[str, float]],
                 resamples: int, seed: int, level: float) -> Interval | None:
    """Interval of `mean over tasks (score_system - score_baseline)`, resampling shared queries.

    Args:
        system: Task id -> query id -> q value (pass rate, 0-1) of the system's scored queries.
        baseline: The same for the baseline.
        resamples: Bootstrap resamples.
        seed: Generator seed.
        level: Confidence level, e.g. 0.95.

    Returns:
        The interval in points (0-100 scale), or None when no task has a query scored for both
        or one task has a single such query.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for task_id in sorted(system.keys() & baseline.keys()):
        shared = sorted(system[task_id].keys() & baseline[task_id].keys())
        if not shared:
            continue
        if len(shared) < MIN_QUERIES:
            return None
        ours = np.array([system[task_id][q] for q in shared])
        theirs = np.array([baseline[task_id][q] for q in shared])
        draws = rng.integers(0, len(shared), size=(resamples, len(shared)))
        rows.append(100.0 * (ours[draws].mean(axis=1) - theirs[draws].mean(axis=1)))
    if not rows:
        return None
    return interval(np.mean(np.vstack(rows), axis=0), level, resamples)
