"""Grade a query's reference models at build time, on the scorer side.

Each task names the standard baselines of its category (`reference_models`); their code is the
one the reference agents run (`stages/evaluation/agents/scripts/reference_models.py`), applied here to the
query's public tables and graded against its hidden truth like any artifact. A metric with
`references` passes only when it beats each of them by its `margin`.
"""

from __future__ import annotations

import pandas as pd

from stages.catalog import TaskSpec
from stages.evaluation.agents.scripts import reference_models
from stages.grading.grade import grade_artifact


def grade_references(task: TaskSpec, tables: dict[str, pd.DataFrame], scope: dict,
                     artifact_block: dict, required: pd.DataFrame,
                     truth: pd.DataFrame) -> dict[str, dict[str, float | None]]:
    """Reference model -> its recomputed metrics on this query."""
    scoped = reference_models.load_tables(tables, scope)
    out = {}
    for name in task.reference_models:
        frame = reference_models.MODELS[name](scoped, scope, artifact_block, required)
        out[name] = grade_artifact(task, frame, truth, scope["entity_key"]).values
    return out
