"""Running agents: the `evaluate` section, the `agents` it runs, a model's generation settings, `prices`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stages.params.section import Section
from stages.sandbox.limits import SandboxLimits


class EvaluateParams(Section):
    """Evaluation runs: which agents, which split, how many at once, how often infra errors retry."""

    agents: list[str]
    split: Literal["train", "val", "test"] = "test"
    concurrency: int = Field(2, ge=1)
    infra_retries: int = Field(2, ge=0)
    limits: SandboxLimits = SandboxLimits()
    dask_address: str | None = None  # run queries on an existing Dask cluster (tcp://host:8786)
    # Runs of each query by agents whose runs can differ (llm, command); scores are their mean.
    epochs: int = Field(1, ge=1)
    # One Prefect task run per query (each watched in the UI); false: the flow runs the queries on
    # threads of its own and shows a progress artifact, sparing the Prefect server ~36 ms of CPU a
    # query (docs/performance.md); an existing Dask cluster needs task runs.
    query_task_runs: bool = True

    @model_validator(mode="after")
    def _task_runs_for_dask(self) -> EvaluateParams:
        if self.dask_address and not self.query_task_runs:
            raise ValueError("evaluate.dask_address runs queries as Prefect task runs: "
                             "set evaluate.query_task_runs to true")
        return self


class AgentParams(Section):
    """One configured agent: its kind (a key of `stages.evaluation.agents.AGENTS`) and kind-specific options."""

    kind: str
    options: dict[str, Any] = {}
    concurrency: int | None = Field(None, ge=1)  # queries in flight (default evaluate.concurrency)
    epochs: int | None = Field(None, ge=1)  # runs of each query (default evaluate.epochs)


class Generation(BaseModel):
    """Generation settings of a model's calls, set by the harness (the caller cannot change them).

    An llm agent's (`agents.<name>.options.generation`: its proxy forces them on every call) and the
    loop generator's (`generate.auto.generator.generation`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int = Field(4096, ge=1)
    seed: int | None = 0
    # o-series models take `max_completion_tokens` instead of `max_tokens`
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    extra: dict[str, Any] = {}  # more request fields, e.g. {reasoning_effort: low} or vLLM's {top_k: 20}

    def request_fields(self) -> dict[str, Any]:
        """The fields set on every request; a None setting is left to the server."""
        fields = {"temperature": self.temperature, "top_p": self.top_p, "seed": self.seed,
                  self.max_tokens_field: self.max_tokens}
        return {key: value for key, value in fields.items() if value is not None} | self.extra


class ModelPrice(Section):
    """What one model costs, in USD per million tokens."""

    input_per_mtok: float = Field(ge=0)
    cached_input_per_mtok: float | None = Field(None, ge=0)  # None: cached tokens cost as input
    output_per_mtok: float = Field(ge=0)  # reasoning tokens are output tokens


class PriceTable(Section):
    """A versioned price table for the cost of LLM agents' calls (a model not listed costs null)."""

    version: str
    source: str | None = None
    models: dict[str, ModelPrice] = {}
