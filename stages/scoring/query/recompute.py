"""Turn what an agent handed in for a graded task into the answer the scorer scores.

For a task whose metrics are graded, the scored answer is `{"metrics": <recomputed values>}`,
computed by the harness from the artifact against the hidden truth; the metrics the agent reported
in `answer.json` are only compared with them (the honesty check). A missing artifact is no output
(or an execution error when the program failed); an artifact that cannot be graded is unparseable,
with the reason kept.

Honesty: a reported metric agrees when `|reported - recomputed| <= agree_within + agree_relative
* |recomputed|` (the metric's own bounds: wide where the agent can only estimate the value, e.g.
on a withheld test period; narrow where it can compute it exactly). A query's verdict
is `agrees` when every graded metric was reported and agrees, `disagrees` when one disagrees,
`unreported` when one is missing; there is no verdict (None) without a gradable artifact.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import pandas as pd

from stages.catalog import TaskSpec
from stages.scoring.query.artifacts import ArtifactError, read_artifact
from stages.scoring.query.grade import Grades, grade_artifact
from stages.scoring.query.outcomes import Execution, as_finite


@dataclass(frozen=True)
class Recomputed:
    """The execution to score (answer = recomputed metrics) and what grading found."""

    execution: Execution
    grades: Grades | None
    artifact_problem: str | None
    honesty: str | None
    reported: dict[str, float | None]


def _reported(task: TaskSpec, answer_text: str | None) -> dict[str, float | None]:
    try:
        document = json.loads(answer_text) if answer_text is not None else {}
    except (ValueError, RecursionError):
        document = {}
    metrics = document.get("metrics") if isinstance(document, dict) else None
    metrics = metrics if isinstance(metrics, dict) else {}
    return {m.name: as_finite(metrics.get(m.name)) for m in task.answer.metrics or [] if m.grade}


def honesty(task: TaskSpec, reported: dict[str, float | None],
            recomputed: dict[str, float | None]) -> str:
    """`agrees`, `disagrees` or `unreported` (see the module docstring)."""
    verdict = "agrees"
    for metric in task.answer.metrics or []:
        if metric.grade is None:
            continue
        said, value = reported.get(metric.name), recomputed.get(metric.name)
        if said is None:
            verdict = "unreported"
        elif value is None or abs(said - value) > (metric.grade.agree_within
                                                    + metric.grade.agree_relative * abs(value)):
            return "disagrees"
    return verdict


def recompute(task: TaskSpec, execution: Execution, artifact: bytes | None,
              artifact_problem: str | None, truth: pd.DataFrame, required: pd.DataFrame,
              key: str) -> Recomputed:
    """Grade the artifact and build the execution the scorer scores (see the module docstring)."""
    reported = _reported(task, execution.answer_text)
    if execution.infra_error is not None or execution.timed_out:
        return Recomputed(execution, None, artifact_problem, None, reported)
    if artifact is None and artifact_problem is None:
        missing = replace(execution, answer_text=None, answer_problem=None)
        return Recomputed(missing, None, f"no work/{task.artifact.file}", None, reported)
    try:
        if artifact is None:
            raise ArtifactError(artifact_problem)
        grades = grade_artifact(task, read_artifact(artifact, task.artifact, required), truth, key)
    except ArtifactError as error:
        unparseable = replace(execution, answer_text=None, answer_problem=str(error))
        return Recomputed(unparseable, None, str(error), None, reported)
    values = {name: value for name, value in grades.values.items() if value is not None}
    scored = replace(execution, answer_text=json.dumps({"metrics": values}), answer_problem=None)
    return Recomputed(scored, grades, None, honesty(task, reported, grades.values), reported)
