"""A metric applied to an artifact's values: guarded, per entity, then aggregated.

The formulas are `metrics`'; this is how the grader applies them to untrusted values. A metric on
huge finite values that overflows is `MetricUndefined`, not inf (`finite_score`); a per-entity
metric scores each entity's rows (`entity_rows`, `per_entity`) and the entities' scores become one
number by their median or mean (`aggregate`: a score per item, then a metric over items).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from stages.scoring.query.metrics import MetricUndefined


@dataclass(frozen=True)
class EntityScores:
    """A metric per entity (in the entities' order) and why it is undefined for the others."""

    values: dict[Any, float]
    undefined: dict[Any, str]


def finite_score(metric: Callable[[Any, Any], float], obs: Any, sim: Any) -> float:
    """`metric(obs, sim)`, or `MetricUndefined` when huge (finite) values make it overflow.

    An artifact is untrusted: 1e200 is a finite float the reader accepts, and its square is not.
    """
    try:
        with np.errstate(over="raise", invalid="raise"):
            value = metric(obs, sim)
    except (OverflowError, FloatingPointError) as error:
        raise MetricUndefined(f"the values are too large: the metric overflows ({error})") from error
    if not np.isfinite(value):
        raise MetricUndefined("the values are too large: the metric is not finite")
    return value


def entity_rows(keys: pd.Series) -> dict[Any, np.ndarray]:
    """Each entity's row positions (in row order), by entity key sorted: the groups `per_entity` scores.

    Rows without a key are a `ValueError`, not a silent drop.
    """
    if keys.isna().any():
        raise ValueError(f"{int(keys.isna().sum())} row(s) have no {keys.name!r}")
    return keys.groupby(keys, sort=True).indices


def per_entity(entities: dict[Any, np.ndarray], obs: Any, sim: Any,
               metric: Callable[[Any, Any], float]) -> EntityScores:
    """`metric(obs, sim)` on each entity's rows (`entity_rows`): a score each, in the entities' order.

    Entities where the metric is undefined are left out of `values` and listed in `undefined` with
    the reason; other errors propagate.
    """
    values: dict[Any, float] = {}
    undefined: dict[Any, str] = {}
    observed, simulated = np.asarray(obs), np.asarray(sim)
    for entity, rows in entities.items():
        try:
            values[entity] = finite_score(metric, observed[rows], simulated[rows])
        except MetricUndefined as error:
            undefined[entity] = str(error)
    return EntityScores(values, undefined)


AGGREGATORS: dict[str, Callable[[np.ndarray], Any]] = {"median": np.median, "mean": np.mean}


def aggregate(values: Any, how: Literal["median", "mean"]) -> float:
    """The median or mean of per-entity scores (one metric from many scores).

    A NaN or infinite score is a `ValueError`: scores never are, so it is a bug upstream, and
    dropping it would shrink the denominator. No scores raise `MetricUndefined`.
    """
    if how not in AGGREGATORS:
        raise ValueError(f"unknown aggregate {how!r}; expected one of {sorted(AGGREGATORS)}")
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError("values hold NaN or infinite scores")
    if array.size == 0:
        raise MetricUndefined("no scores to aggregate")
    return float(AGGREGATORS[how](array))
