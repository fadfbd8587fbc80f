"""Render what an agent reads: the task prompt, the scope block and the answer-format block.

The answer-format block tells the agent the exact shape of `work/answer.json` (metric names, units,
valid ranges, or the hypothesis format). It never holds targets, gold values or citations.
"""

from __future__ import annotations

import json
from string import Template

from stages.catalog import AnswerSpec, TaskSpec
from stages.construction.scopes import ResolvedScope, render_scope_block
from stages.scoring.query.truth import held_out, rows_rule, test_start


class PromptError(ValueError):
    """A prompt template could not be rendered (unknown or unresolved placeholder)."""


def answer_schema(answer: AnswerSpec) -> dict:
    """The public description of the answer file: what to write, never what is right."""
    if answer.metrics is not None:
        return {
            "kind": "metrics",
            "metrics": [
                {
                    "name": m.name,
                    "description": m.description,
                    "unit": m.unit,
                    "valid_range": list(m.valid_range),
                    "no_skill": m.no_skill,
                }
                for m in answer.metrics
            ],
        }
    spec = answer.hypothesis
    return {
        "kind": "hypothesis",
        "format": spec.format,
        "description": spec.description,
        "categories": spec.categories,
        "valid_range": list(spec.valid_range),
    }


def render_answer_block(answer: AnswerSpec) -> str:
    """Render the answer-format block with an example of the file's shape."""
    schema = answer_schema(answer)
    if schema["kind"] == "metrics":
        shape = '{"metrics": {' + ", ".join(f'"{m["name"]}": <number>' for m in schema["metrics"])
        shape += "}}"
    else:
        shape = '{"answer": <' + schema["format"] + ">}"
    return (
        "## Answer format\n\n"
        f"Write `work/answer.json` as `{shape}`. The fields:\n\n"
        f"```json\n{json.dumps(schema, sort_keys=True)}\n```\n"
    )


def artifact_schema(task: TaskSpec, scope: ResolvedScope, query_id: str = "") -> dict:
    """The public description of the artifact: file, key, value columns and the rows owed."""
    artifact, truth = task.artifact, task.truth
    where = {"table": truth.table, "time": truth.time, "column": truth.column}
    rows: dict = {"kind": "entities", **where}
    if truth.kind == "holdout":
        rows = {"kind": "holdout", **where,
                "from": test_start(truth, scope.start, scope.end).isoformat(),
                "to": scope.end.isoformat()}
    elif truth.kind == "hidden_gaps":
        rows = {"kind": "hidden_gaps", **where}
    elif truth.kind == "held_out_entities":
        rows = {"kind": "held_out_entities", **where,
                "entities": held_out(list(scope.entities), truth.test_share, query_id)}
    return {"file": artifact.file, "key": artifact.key, "columns": artifact.columns,
            "descriptions": artifact.descriptions, "rows": rows}


def render_artifact_block(task: TaskSpec, scope: ResolvedScope, query_id: str = "") -> str:
    """Render the artifact block: what to hand in besides answer.json, and that it is graded."""
    schema = artifact_schema(task, scope, query_id)
    columns = ", ".join(f"`{c}` ({t})" for c, t in [*((k, "key") for k in schema["key"]),
                                                    *schema["columns"].items()])
    rule = rows_rule(task.truth, scope.entity_key, scope.start, scope.end,
                     schema["rows"].get("entities"))
    return (
        "## Artifact\n\n"
        f"Also write `work/{schema['file']}` (Parquet) with the columns {columns} and {rule}. "
        "The harness computes every metric itself from this file on data you do not have; the "
        "metrics you report in `answer.json` are compared with its values.\n\n"
        f"```json\n{json.dumps(schema, sort_keys=True)}\n```\n"
    )


def render_prompt(task: TaskSpec, scope: ResolvedScope, query_id: str = "") -> str:
    """Render the full prompt.md of one query (the id seeds which entities a query holds out)."""
    values = {
        "scope_description": scope.description,
        "n_entities": str(len(scope.entities)),
        "start": scope.start.isoformat(),
        "end": scope.end.isoformat(),
    }
    try:
        body = Template(task.prompt).substitute(values)
    except (KeyError, ValueError) as error:
        raise PromptError(f"task {task.id}: prompt placeholder problem: {error!r}") from error
    return (
        f"# {task.id}\n\n{body.strip()}\n\n"
        "The data are in `data/` (read-only; see `data/README.md`). Work in `work/`.\n\n"
        f"{render_scope_block(scope)}\n{render_answer_block(task.answer)}"
        + (f"\n{render_artifact_block(task, scope, query_id)}" if task.artifact is not None else "")
    )

