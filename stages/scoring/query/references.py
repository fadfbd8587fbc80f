"""Grade every reference model on a query at build time, on the scorer side.

Each task names the standard baselines of its category (`reference_models`); a metric with
`references` must beat each of those by its `margin`. A named model's targets are what the task
writer tuned, but they are not the only cheap answers: the other standard models
(`reference_models.MODELS`) are graded on the query too, and a metric with references must also
beat each of them that is defined there (strictly: equal does not pass). Otherwise a baseline the
task did not name (least squares on the drivers of a linear task, say) could pass it. The code is
the one the reference agents run (`stages/evaluation/agents/scripts/reference_models/`), applied
to the query's public tables and graded against its hidden truth like any artifact.

Only models of the task's kind are graded: partitions (`reference_models.PARTITIONS`) for a task
whose metrics grade labels, value models otherwise. A named model that cannot be applied to the
query stops the query (it is discarded at align); an unnamed one that cannot is recorded under
`_not_applicable` with the reason.

Averaging two cheap answers is itself a cheap answer (it often beats both: their errors partly
cancel). So for value tasks the mean of every pair of applicable value models is graded too, as an
unnamed reference named `<a>+<b>`: a metric must beat those as well, and a gold that does not is
discarded at verify.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pandas as pd

from stages.catalog import TaskSpec
from stages.evaluation.agents.scripts import reference_models
from stages.scoring.query.grade import FEATURE_FUNCTIONS, LABEL_FUNCTIONS, align, grade_aligned

NOT_APPLICABLE = "_not_applicable"  # unnamed model -> why it has no values on this query


def _same_kind(task: TaskSpec) -> list[str]:
    """The standard models that hand in what the task's metrics grade (labels or values)."""
    functions = {metric.grade.function for metric in task.answer.metrics or [] if metric.grade}
    labels = bool(functions) and functions <= {*FEATURE_FUNCTIONS, *LABEL_FUNCTIONS}
    return [name for name in reference_models.MODELS if (name in reference_models.PARTITIONS) == labels]


def grade_references(task: TaskSpec, tables: dict[str, pd.DataFrame], scope: dict,
                     artifact_block: dict, required: pd.DataFrame,
                     truth: pd.DataFrame) -> dict[str, dict[str, float | None]]:
    """Reference model -> its recomputed metrics on this query (named models first).

    Every model fills the owed rows (`required`) in their order, so the truth is aligned to them
    once (`grade.align`) and each model and blend is graded on arrays.
    """
    scoped = reference_models.load_tables(tables, scope)
    aligned = align(task, truth, required, scope["entity_key"])
    others = [name for name in _same_kind(task) if name not in task.reference_models]
    out, skipped, frames = {}, {}, {}
    for name in [*task.reference_models, *others]:
        try:
            frame = reference_models.MODELS[name](scoped, scope, artifact_block, required)
            values = grade_aligned(task, aligned, frame).values
        except Exception as error:  # noqa: BLE001 - a model that does not fit this query's data
            if name in task.reference_models:
                raise
            skipped[name] = f"{type(error).__name__}: {error}"
            continue
        out[name], frames[name] = values, frame
    if not any(name in reference_models.PARTITIONS for name in frames):
        for name, frame in blends(frames, list(artifact_block["columns"])).items():
            out[name] = grade_aligned(task, aligned, frame).values
    if skipped:
        out[NOT_APPLICABLE] = skipped
    return out


def blends(frames: dict[str, pd.DataFrame], columns: list[str]) -> dict[str, pd.DataFrame]:
    """`<a>+<b>` -> the mean of two models' predictions, for every pair (in `MODELS` order).

    Every model fills the same owed rows in the same order, so the value columns average row by row.
    """
    names = [name for name in reference_models.MODELS if name in frames]
    out = {}
    for first, second in itertools.combinations(names, 2):
        mean = frames[first].copy()
        for column in columns:
            mean[column] = (frames[first][column].to_numpy(dtype=float)
                            + frames[second][column].to_numpy(dtype=float)) / 2
        out[f"{first}+{second}"] = mean
    return out


def read_references(query_dir: Path) -> dict[str, dict[str, float | None]]:
    """A staged query's graded reference models from its `references.json` (empty without one).

    The record of models that did not apply is left out.
    """
    path = query_dir / "references.json"
    graded = json.loads(path.read_text()) if path.exists() else {}
    graded.pop(NOT_APPLICABLE, None)
    return graded
