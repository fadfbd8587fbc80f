"""Workflow documents as a model writes and reads them: the catalogue it is shown, its reply parsed.

Both the optimiser's designer (stages/optimize/designer.py) and the `compose` operator (a workflow
written for one query at run time) show a model what a document may hold and read back the one it
wrote; this is the one home of both.
"""

from __future__ import annotations

import re

import yaml
from pydantic import ValidationError

from stages.evaluation.agents.llm.prompts import STRATEGY
from stages.evaluation.agents.llm.workflows import schema
from stages.evaluation.agents.llm.workflows.schema import BUILTIN, Workflow

YAML_BLOCK = re.compile(r"```ya?ml\s*\n(.*?)```", re.DOTALL)
RETRY = "That document cannot run: {problem}. Reply again with one complete document in a ```yaml block."


def parse_workflow(reply: str) -> Workflow:
    """The reply's last ```yaml block as a checked workflow (ValueError, with the problem, otherwise)."""
    blocks = YAML_BLOCK.findall(reply or "")
    if not blocks:
        raise ValueError("the reply has no ```yaml block")
    try:
        return Workflow.model_validate(yaml.safe_load(blocks[-1]))
    except yaml.YAMLError as error:
        raise ValueError(f"the block is not YAML: {error}") from error
    except ValidationError as error:
        raise ValueError(str(error)) from error


def catalogue() -> str:
    """What a document may hold: the schema's description and the role instructions by name."""
    roles = "\n".join(f"- `{name}`: {' '.join(text.split())[:300]}" for name, text in sorted(STRATEGY.items()))
    return (f"# Workflow documents\n\n{schema.__doc__}\n\n# Instructions a node's `prompt` may name\n\n"
            f"{roles}\n\nBuilt-in examples: {', '.join(sorted(p.stem for p in BUILTIN.glob('*.yaml')))}.")
