"""Recompute a task's metrics from an artifact and the query's hidden truth (the harness's numbers).

Pairwise metrics (`nse`, `kge`, `rmse`, ...) join the artifact to the truth on the truth's keys and
compare the truth's target column with the metric's artifact column, per entity then aggregated
(`median`/`mean`), or pooled over every truth row. `silhouette` grades the artifact's labels in
the benchmark's feature space (the truth of a `signatures` task). A metric that is undefined on
this artifact (e.g. a single cluster) is None, which fails its check; the reason is kept.

The join and everything that depends on the truth alone (which rows each metric grades, their
periods and entities) is an `Alignment` of the truth with the artifact's key rows, made once:
`grade_aligned` then grades any artifact with those rows, in that order, on arrays. Build time
grades ~50 reference models and blends of one query on the same owed rows
(`stages.scoring.query.references`); `grade_artifact` aligns and grades a single artifact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from stages.catalog import MetricSpec, TaskSpec
from stages.scoring.query import entities, metrics
from stages.scoring.query.truth import time_values

FEATURE_FUNCTIONS = ("silhouette",)
LABEL_FUNCTIONS = ("adjusted_rand",)
TRUTH = "_truth_value"  # the truth's target column while it is joined to the artifact's rows
ROW = "_artifact_row"  # the position of the artifact row a truth row is joined to


@dataclass(frozen=True)
class Grades:
    """Recomputed metric values (None when undefined) and why a value is undefined."""

    values: dict[str, float | None]
    undefined: dict[str, str]


@dataclass(frozen=True)
class GradedRows:
    """The rows one pairwise metric grades, fixed by the truth before any artifact value is read.

    `rows` are the positions of the graded artifact rows (joined to a truth row, within the
    quantile range), in the join's order. With a timescale, `periods` numbers each of them by its
    entity x period (in sorted order) and `obs` holds the truth's period means; otherwise `obs` is
    the truth on those rows. `entities` maps each entity (sorted) to its positions in `obs`.
    """

    rows: np.ndarray
    periods: np.ndarray | None
    obs: pd.Series
    entities: dict[Any, np.ndarray]

    def simulated(self, values: np.ndarray) -> np.ndarray:
        """An artifact column's values on the graded rows (their period means with a timescale)."""
        graded = values[self.rows]
        if self.periods is None:
            return graded
        return pd.Series(graded).groupby(self.periods, sort=True).mean().to_numpy()


@dataclass(frozen=True)
class Alignment:
    """The truth joined once to an artifact's key rows, and each pairwise metric's graded rows."""

    rows: pd.DataFrame  # the artifact's key columns the truth was joined to
    truth: pd.DataFrame
    key: str
    graded: dict[str, GradedRows]  # metric name -> its graded rows


PERIODS = {"week": "W-SUN", "month": "M", "year": "Y"}


def _graded_rows(metric: MetricSpec, joined: pd.DataFrame, key: str, time: str) -> GradedRows:
    """The graded rows: within the entity's quantile range of truth, grouped by period."""
    grade = metric.grade
    if grade.obs_quantile is not None:
        low, high = grade.obs_quantile
        by_entity = joined.groupby(key)[TRUTH]
        keep = joined[TRUTH].between(by_entity.transform("quantile", low),
                                     by_entity.transform("quantile", high))
        joined = joined[keep]
    rows = joined[ROW].to_numpy()
    if grade.timescale == "step":
        return GradedRows(rows, None, joined[TRUTH], entities.entity_rows(joined[key]))
    period = time_values(joined, time).dt.to_period(PERIODS[grade.timescale]).astype(str)
    groups = joined.assign(_period=period.to_numpy()).groupby([key, "_period"], sort=True)
    means = groups[[TRUTH]].mean().reset_index()
    return GradedRows(rows, groups.ngroup().to_numpy(), means[TRUTH], entities.entity_rows(means[key]))


def align(task: TaskSpec, truth: pd.DataFrame, rows: pd.DataFrame, key: str) -> Alignment:
    """Join the truth to the artifact rows `rows` (key columns at least) for `grade_aligned`."""
    keys = [c for c in task.artifact.key if c in truth.columns]
    pairwise = [metric for metric in task.answer.metrics or []
                if metric.grade is not None and metric.grade.function not in FEATURE_FUNCTIONS]
    graded = {}
    if pairwise:
        positions = rows[keys].assign(**{ROW: np.arange(len(rows))})
        joined = truth.rename(columns={task.truth.column: TRUTH}).merge(positions, on=keys, how="inner")
        graded = {metric.name: _graded_rows(metric, joined, key, task.truth.time) for metric in pairwise}
    return Alignment(rows[keys].copy(), truth, key, graded)


def _pairwise(metric: MetricSpec, graded: GradedRows, values: np.ndarray) -> float:
    function = metrics.METRICS[metric.grade.function]
    sim = graded.simulated(values)
    if metric.grade.function in LABEL_FUNCTIONS:  # labels compare as they are, never as floats
        return function(graded.obs.astype(str).to_numpy(), sim)
    if metric.grade.aggregate == "pooled":
        return entities.finite_score(function, graded.obs.to_numpy(float), sim.astype(float))
    scores = entities.per_entity(graded.entities, graded.obs.to_numpy(), sim, function)
    if len(scores.values) == 0:
        raise metrics.MetricUndefined(f"no entity has a defined {metric.grade.function}")
    return entities.aggregate(list(scores.values.values()), metric.grade.aggregate)


def _silhouette(metric: MetricSpec, artifact: pd.DataFrame, truth: pd.DataFrame, key: str) -> float:
    joined = truth.merge(artifact[[key, metric.grade.column]], on=key, how="inner")
    features = joined.drop(columns=[key, metric.grade.column]).to_numpy(float)
    return metrics.silhouette(features, joined[metric.grade.column].to_numpy())


def grade_aligned(task: TaskSpec, alignment: Alignment, artifact: pd.DataFrame) -> Grades:
    """Every graded metric of the task, recomputed from an artifact with the alignment's rows.

    Raises:
        ValueError: When the artifact's key columns are not the aligned rows, in their order.
    """
    if not all(artifact[column].equals(keys) for column, keys in alignment.rows.items()):
        raise ValueError("the artifact's rows are not the rows the truth was aligned to (keys or order differ)")
    values: dict[str, float | None] = {}
    undefined: dict[str, str] = {}
    for metric in task.answer.metrics or []:
        if metric.grade is None:
            continue
        try:
            if metric.grade.function in FEATURE_FUNCTIONS:
                value = _silhouette(metric, artifact, alignment.truth, alignment.key)
            else:
                value = _pairwise(metric, alignment.graded[metric.name],
                                  artifact[metric.grade.column].to_numpy())
        except metrics.MetricUndefined as error:
            values[metric.name], undefined[metric.name] = None, str(error)
            continue
        values[metric.name] = float(value) if np.isfinite(value) else None
    return Grades(values, undefined)


def grade_artifact(task: TaskSpec, artifact: pd.DataFrame, truth: pd.DataFrame, key: str) -> Grades:
    """Every graded metric of the task, recomputed from the artifact against the truth."""
    return grade_aligned(task, align(task, truth, artifact, key), artifact)
