"""The `generate` section: SDA-style instances and the AutoSciBench loop (its generator, its solver)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from stages.params.evaluation import Generation
from stages.params.section import Profile, Section


class SdaParams(Section):
    """SDA-style generation (`generate.sda`): datasets from the scenarios, instances from the templates."""

    seed: int = 20260
    n_rows: int = Field(400, ge=50)  # rows of each scenario's dataset
    attempts: int = Field(6, ge=1)  # bindings tried per template and dataset
    per_pair: dict[Profile, int] = {"tiny": 5, "default": 40, "full": 200}  # instances per (domain, task type)
    scenarios_per_domain: dict[Profile, int] = {"tiny": 1, "default": 10, "full": 10}  # the first ones of each file


class GeneratorParams(Section):
    """Who proposes the loop's concepts and recipes: the offline generator or a model (`generate.auto.generator`)."""

    kind: Literal["offline", "openai"] = "offline"
    model: str | None = None  # required by kind openai: any model behind an OpenAI-compatible endpoint
    base_url: str = Field("https://api.openai.com/v1", pattern=r"^https?://")
    api_key_env: str | None = "OPENAI_API_KEY"  # None: the server needs no key (a local server)
    # temperature, top_p, max_tokens, seed, max_tokens_field, extra: as an llm agent's `generation`
    generation: dict[str, Any] = {}
    timeout_s: float = Field(120.0, gt=0)  # one request
    max_retries: int = Field(2, ge=0)  # the client's retries on 429, 5xx, timeouts

    @field_validator("generation")
    @classmethod
    def _generation_settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        Generation.model_validate(value)
        return value

    @model_validator(mode="after")
    def _a_model_is_named(self) -> GeneratorParams:
        if self.kind == "openai" and not self.model:
            raise ValueError("kind openai names no model")
        if self.kind == "offline" and self.model:
            raise ValueError(f"kind offline with a model ({self.model!r}): set kind: openai to use it")
        return self


class AutoParams(Section):
    """The AutoSciBench loop (`generate.auto`): seed concepts are every (domain, task type) pair."""

    seed: int = 7
    generator: GeneratorParams = GeneratorParams()
    # "heuristic": the offline default, in process (stages/generate/auto/solvers.py); or the name of
    # an agent in `agents:` (an LLM agent, a command), run in the sandbox like an evaluation
    solver: str = "heuristic"


class GenerateParams(Section):
    """Automatic generation (`generate`): SDA-style instances and the AutoSciBench loop."""

    sda: SdaParams = SdaParams()
    auto: AutoParams = AutoParams()
    # data-free agents of `agents:`, run in the sandbox: a loop task one passes is refused, and on the
    # generated instances none may score above chance (`python -m stages.generate.sda.attempts --gate`)
    floors: list[str] = ["nodata", "fabricate", "defensive"]
    dask_address: str | None = None  # the SDA scenarios on an existing Dask cluster (tcp://host:8786)
