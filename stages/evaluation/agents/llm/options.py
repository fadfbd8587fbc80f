"""Options of an `llm` agent, and which of them define the agent (its journal key) and which do not.

What the agent is - its strategy, model, generation settings, prompt variants and bounds - keys its
journal records: change one and every query runs again. How the harness reaches the model - the
endpoint, the key's variable, the per-call timeout, the retry policy, prices - does not: a moved
endpoint or a new price table never re-runs a finished query.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stages.params import Generation, PriceTable

Strategy = Literal["one_turn", "react", "selfdebug", "reflexion", "workflow", "explorer"]
TRANSPORT = ("base_url", "api_key_env", "per_call_timeout_s", "max_retries", "retry_backoff_s",
             "retry_backoff_max_s", "prices")


class ModelAccess(BaseModel):
    """A model behind an OpenAI-compatible endpoint, reached through the harness's proxy.

    `llm` agents are built on it; a `command` agent gets it under `options.model` (its program
    then finds the proxy's socket in `$SCIBENCH_LLM_SOCKET`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    base_url: str = Field(pattern=r"^https?://")
    api_key_env: str | None = "OPENAI_API_KEY"  # None: the server needs no key (a local server)
    generation: Generation = Generation()
    max_turns: int = Field(20, ge=1)  # model calls per query (the proxy refuses more)
    token_budget: int | None = Field(500_000, ge=1)  # prompt + completion tokens per query
    per_call_timeout_s: float = Field(180.0, gt=0)  # one upstream request, whole response
    max_retries: int = Field(4, ge=0)  # upstream retries on 429, 5xx, timeouts, lost connections
    retry_backoff_s: float = Field(2.0, ge=0)  # first wait, doubled per retry
    retry_backoff_max_s: float = Field(60.0, ge=0)
    prices: PriceTable | None = None  # this agent's prices (default: params.yaml `prices`)

    def identity(self) -> dict:
        """What defines the access (not how the model is reached): part of a journal key."""
        return self.model_dump(mode="json", exclude=set(TRANSPORT))


class Options(ModelAccess):
    """Options of an `llm` agent (params.yaml `agents.<name>.options`).

    A built-in `strategy`, a `workflow` document of one's own (its path; what it holds defines the
    agent, not where it lies), or `workflows`: a folder whose `index.json` names each task's
    document in it (what an optimize run hands in: stages/optimize/protocol.py).
    """

    strategy: Strategy | None = None
    workflow: str | None = None
    workflows: str | None = None
    domain_knowledge: bool = False  # MoSciBench's ablation: notes on the task's domain in the prompt
    scaffold: bool = False  # MoSciBench's ablation: explicit decomposition and checkpoints
    max_rounds: int = Field(5, ge=1)  # selfdebug / reflexion attempts
    tool_output_chars: int = Field(16_384, ge=256)  # of a tool's output, sent back to the model
    wall_budget_s: float = Field(540.0, gt=0)  # the loop stops itself; keep it below the sandbox's wall
    code_timeout_s: float = Field(120.0, gt=0)  # one run of the model's code


    @model_validator(mode="after")
    def _one_workflow(self) -> Options:
        if sum(choice is not None for choice in (self.strategy, self.workflow, self.workflows)) != 1:
            raise ValueError("an llm agent names one of a built-in `strategy`, a `workflow` document or a "
                             "`workflows` folder")
        return self

    def identity(self) -> dict:
        """What defines the agent: everything but transport, each workflow as the document it loads."""
        chosen = {key: value for key, value in super().identity().items()
                  if key not in ("strategy", "workflow", "workflows")}
        if self.workflows is not None:
            return chosen | {"workflows": {task_id: self.load_workflow(task_id).model_dump(mode="json")
                                           for task_id in sorted(self.workflow_index())}}
        return chosen | {"workflow": self.load_workflow().model_dump(mode="json")}

    def workflow_index(self) -> dict[str, str]:
        """A `workflows` folder's index: task id -> the document's file name in the folder."""
        import json

        path = Path(self.workflows) / "index.json"
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise ValueError(f"{path}: the index of a workflows folder cannot be read: {error}") from error

    def load_workflow(self, task_id: str | None = None):
        """The workflow the loop runs on a query of `task_id` (stages/evaluation/agents/llm/workflows)."""
        from stages.evaluation.agents.llm.workflows import builtin_workflow, load_workflow

        if self.workflows is not None:
            index = self.workflow_index()
            folder = Path(self.workflows)
            if task_id not in index:
                raise ValueError(f"{folder / 'index.json'}: no workflow for task {task_id!r}")
            path = folder / index[task_id]
            if not path.resolve().is_relative_to(folder.resolve()):
                raise ValueError(f"{folder / 'index.json'}: task {task_id!r} names {index[task_id]!r}, "
                                 "outside the folder")
            return load_workflow(path)
        return builtin_workflow(self.strategy) if self.strategy else load_workflow(Path(self.workflow))


def identity(options: dict) -> dict:
    """The options that define the agent: everything but transport, with defaults filled in."""
    return Options.model_validate(options).identity()
