"""A workflow as data: the nodes an llm agent's loop runs on a query, in order, and what each one sees.

A workflow document (YAML) names its nodes; each is an operator run by a role (the name the proxy
counts its usage under) with that role's instructions (`prompt`, a key of prompts.STRATEGY), and
sees the notes of the earlier nodes it names in `inputs` (its edges). Operators:

- `generate`: one call, no tools; its reply is the node's note (a plan, a review).
- `program`: one call for a complete program, run once in the kernel; `repair: debug` then shows
  the error and asks for a fixed program, `repair: reflect` has `reflect_role` diagnose the failure
  in words before the next attempt, each up to `rounds` runs (an int, or the agent's `max_rounds`).
- `tool_loop`: the `python` tool until the node calls its `finish` tool (`submit` hands in,
  `done` passes a summary on as its note), within `turns` model calls (an int, or `share`: the
  calls left split evenly among the tool loops still to run).
- `verify`: no model call: checks `work/answer.json` as the harness will read it and the artifact
  against the prompt's `## Artifact` block (a readable Parquet file with the declared key and
  columns, and rows); its note says what is wrong, or that it reads.
- `ensemble`: self-consistency: `samples` calls for a complete program, each run in the kernel and
  its hand-in set aside; the one whose numbers agree most with the others' is handed in.
- `compose`: one call in which the model writes a workflow document for this query (the query-level
  methods: a fresh team per query), which then runs as the rest of the run; a document that cannot
  be used is sent back once with its problem, then the built-in `fallback` runs. A composed
  document may not compose again.

A workflow is a DAG by construction: a node's inputs must be earlier nodes, and the only repeats
are the bounded rounds of `repair`. Loading checks every field and names the one that is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stages.evaluation.agents.llm.prompts import STRATEGY
from stages.yamlfile import read_yaml

BUILTIN = Path(__file__).with_name("builtin")
NAME = r"^[a-z][a-z0-9_]*$"


class WorkflowError(ValueError):
    """A workflow document that cannot run; the message names the document and the field."""


class Node(BaseModel):
    """One step of a workflow."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=NAME)
    op: Literal["generate", "program", "tool_loop", "verify", "ensemble", "compose"]
    role: str = Field("agent", pattern=NAME)
    prompt: str | None = None  # a key of prompts.STRATEGY; none for `verify`
    inputs: list[str] = []  # earlier nodes whose notes this node's task message carries
    heading: str | None = None  # how its note is titled for later nodes (default "From the <role>")
    finish: Literal["submit", "done"] | None = None  # tool_loop
    turns: int | Literal["share"] = "share"  # tool_loop
    repair: Literal["none", "debug", "reflect"] = "none"  # program
    rounds: int | Literal["max_rounds"] = "max_rounds"  # program with a repair
    reflect_role: str | None = Field(None, pattern=NAME)  # program with repair: reflect
    fallback: str = Field("react", pattern=NAME)  # compose: the built-in run when no document is usable
    samples: int = Field(3, ge=2)  # ensemble: programs sampled

    @model_validator(mode="after")
    def _fields_of_the_operator(self) -> Node:
        needs_prompt = self.op != "verify"
        if needs_prompt and self.prompt is None:
            raise ValueError(f"node {self.id!r}: `prompt` is required for op {self.op!r}")
        if self.prompt is not None and self.prompt not in STRATEGY:
            raise ValueError(f"node {self.id!r}: prompt {self.prompt!r} is not one of {sorted(STRATEGY)}")
        if (self.op == "tool_loop") != (self.finish is not None):
            raise ValueError(f"node {self.id!r}: `finish` is for a tool_loop, which needs one (submit or done)")
        if self.repair == "reflect" and self.reflect_role is None:
            raise ValueError(f"node {self.id!r}: repair: reflect needs `reflect_role`")
        if self.op != "program" and (self.repair != "none" or self.reflect_role is not None):
            raise ValueError(f"node {self.id!r}: `repair` is for a program node")
        if isinstance(self.turns, int) and self.turns < 1 or isinstance(self.rounds, int) and self.rounds < 1:
            raise ValueError(f"node {self.id!r}: `turns` and `rounds` are at least 1")
        return self

    def note_heading(self) -> str:
        """The title of this node's note in a later node's task message."""
        return self.heading or f"From the {self.role.replace('_', ' ')}"


class Workflow(BaseModel):
    """A whole workflow: its name and its nodes in the order they run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME)
    description: str = ""
    nodes: list[Node] = Field(min_length=1)

    @model_validator(mode="after")
    def _a_dag_of_known_nodes(self) -> Workflow:
        seen: set[str] = set()
        for index, node in enumerate(self.nodes):
            if node.id in seen:
                raise ValueError(f"nodes[{index}]: the id {node.id!r} is used twice")
            for name in node.inputs:
                if name not in seen:
                    raise ValueError(f"nodes[{index}].inputs: {name!r} is not an earlier node "
                                     "(a node sees only the notes of nodes before it)")
            seen.add(node.id)
        return self


def load_workflow(path: Path) -> Workflow:
    """Read and check a workflow document."""
    try:
        return Workflow.model_validate(read_yaml(path))
    except (ValidationError, OSError, ValueError) as error:
        raise WorkflowError(f"{path}: {error}") from error


def builtin_workflow(name: str) -> Workflow:
    """One of the built-in strategies (builtin/<name>.yaml)."""
    path = BUILTIN / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in BUILTIN.glob("*.yaml"))
        raise WorkflowError(f"no built-in workflow {name!r}; known: {known}")
    return load_workflow(path)
