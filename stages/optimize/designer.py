"""The designer: the optimiser's model, asked for a workflow document.

It is shown the operators and fields a document may use (the schema's own description), the role
instructions it may name, the task as a train query's prompt states it (public: what an agent is
shown), and the workflow to improve with its mean val reward. Never a gold, a truth or a test
query. It answers one YAML document in a ```yaml block; a document the schema refuses is sent back
once with the problem, then the step keeps the workflow it had (asking.py).
"""

from __future__ import annotations

import os

import yaml

from stages.evaluation.agents.llm.asking import Asker
from stages.evaluation.agents.llm.options import ModelAccess
from stages.evaluation.agents.llm.workflows import Workflow
from stages.evaluation.agents.llm.workflows.documents import RETRY, catalogue, parse_workflow

SYSTEM = ("You design workflows for an AI agent that does a scientific data analysis in a Python sandbox. A"
          " workflow is a YAML document of nodes run in order; its reward is measured on queries of the task."
          " Reply with one complete document in a ```yaml block and nothing else.")


class Designer:
    """Proposes workflows with one model."""

    def __init__(self, asker: Asker):
        self.asker = asker

    @classmethod
    def of(cls, access: ModelAccess) -> Designer:
        """The designer on an agent's model access (its key read from `api_key_env`)."""
        key = os.environ.get(access.api_key_env) if access.api_key_env else None
        return cls(Asker(access.model, access.base_url, key, access.generation, RETRY, "kept the workflow",
                         access.per_call_timeout_s, access.max_retries))

    def propose(self, step: str, task: str, current: Workflow, reward: float | None, ask: str) -> Workflow | None:
        """A new document for the task, improving on `current` (None: the model gave no usable one)."""
        shown = yaml.safe_dump(current.model_dump(mode="json", exclude_defaults=True), sort_keys=False)
        prompt = (f"{catalogue()}\n\n# The task (as the agent is shown it)\n\n{task}\n\n# The current workflow"
                  f" (mean reward on val: {'not measured' if reward is None else f'{reward:.3f}'})\n\n"
                  f"```yaml\n{shown}```\n\n{ask}")
        return self.asker.ask(step, SYSTEM, prompt, parse_workflow)
