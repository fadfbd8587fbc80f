"""Recompute a task's metrics from an artifact and the query's hidden truth (the harness's numbers).

Pairwise metrics (`nse`, `kge`, `rmse`, ...) join the artifact to the truth on the truth's keys and
compare the truth's target column with the metric's artifact column, per entity then aggregated
(`median`/`mean`), or pooled over every truth row. `silhouette` grades the artifact's labels in
the benchmark's feature space (the truth of a `signatures` task). A metric that is undefined on
this artifact (e.g. a single cluster) is None, which fails its check; the reason is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from stages.catalog import MetricSpec, TaskSpec
from stages.grading import metrics
from stages.grading.truth import time_values

FEATURE_FUNCTIONS = ("silhouette",)
LABEL_FUNCTIONS = ("adjusted_rand",)
TRUTH = "_truth_value"  # the truth's target column while it is joined to an artifact


@dataclass(frozen=True)
class Grades:
    """Recomputed metric values (None when undefined) and why a value is undefined."""

    values: dict[str, float | None]
    undefined: dict[str, str]


PERIODS = {"week": "W-SUN", "month": "M", "year": "Y"}


def _select(metric: MetricSpec, joined: pd.DataFrame, key: str, target: str, time: str) -> pd.DataFrame:
    """The graded rows: within the entity's quantile range of truth, averaged over periods."""
    grade, column = metric.grade, metric.grade.column
    if grade.obs_quantile is not None:
        low, high = grade.obs_quantile
        by_entity = joined.groupby(key)[target]
        keep = joined[target].between(by_entity.transform("quantile", low),
                                      by_entity.transform("quantile", high))
        joined = joined[keep]
    if grade.timescale != "step":
        times = time_values(joined, time)
        period = times.dt.to_period(PERIODS[grade.timescale]).astype(str)
        joined = (joined.assign(_period=period.to_numpy()).groupby([key, "_period"], sort=True)
                  [[target, column]].mean().reset_index())
    return joined


def _pairwise(metric: MetricSpec, joined: pd.DataFrame, key: str, target: str) -> float:
    function = metrics.METRICS[metric.grade.function]
    if metric.grade.function in LABEL_FUNCTIONS:  # labels compare as they are, never as floats
        return function(joined[target].astype(str).to_numpy(), joined[metric.grade.column].to_numpy())
    if metric.grade.aggregate == "pooled":
        return metrics.finite_score(function, joined[target].to_numpy(float),
                                    joined[metric.grade.column].to_numpy(float))
    scores = metrics.per_entity(joined, key, target, metric.grade.column, function)
    if len(scores.values) == 0:
        raise metrics.MetricUndefined(f"no entity has a defined {metric.grade.function}")
    return metrics.aggregate(scores.values, metric.grade.aggregate)


def _silhouette(metric: MetricSpec, artifact: pd.DataFrame, truth: pd.DataFrame, key: str) -> float:
    joined = truth.merge(artifact[[key, metric.grade.column]], on=key, how="inner")
    features = joined.drop(columns=[key, metric.grade.column]).to_numpy(float)
    return metrics.silhouette(features, joined[metric.grade.column].to_numpy())


def grade_artifact(task: TaskSpec, artifact: pd.DataFrame, truth: pd.DataFrame, key: str) -> Grades:
    """Every graded metric of the task, recomputed from the artifact against the truth."""
    values: dict[str, float | None] = {}
    undefined: dict[str, str] = {}
    keys = [c for c in task.artifact.key if c in truth.columns]
    joined = None
    for metric in task.answer.metrics or []:
        if metric.grade is None:
            continue
        try:
            if metric.grade.function in FEATURE_FUNCTIONS:
                value = _silhouette(metric, artifact, truth, key)
            else:
                if joined is None:  # the truth's value column renamed: an artifact column may share its name
                    joined = truth.rename(columns={task.truth.column: TRUTH}).merge(artifact, on=keys, how="inner")
                selected = _select(metric, joined, key, TRUTH, task.truth.time)
                value = _pairwise(metric, selected, key, TRUTH)
        except metrics.MetricUndefined as error:
            values[metric.name], undefined[metric.name] = None, str(error)
            continue
        values[metric.name] = float(value) if np.isfinite(value) else None
    return Grades(values, undefined)
