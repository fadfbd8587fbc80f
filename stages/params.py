"""params.yaml as a validated model. Only entry points call `load_params`; they pass plain values down.

Every section forbids unknown keys, so a typo fails fast and names the key. Source- and agent-specific
blocks are validated by the `Params` model of the module the registry names.
"""

from __future__ import annotations

import warnings
from datetime import date
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stages.sandbox.limits import SandboxLimits
from stages.yamlfile import read_yaml

Profile = Literal["tiny", "default", "full"]


class Section(BaseModel):
    """Base for params sections: unknown keys fail."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class SynthesizeSource(Section):
    """Generator settings shared by all profiles, plus the size of each profile."""

    params: dict[str, Any] = {}
    scales: dict[Profile, dict[str, Any]]


class IngestSource(Section):
    """Where a source's raw files are and how its reader behaves (reader `Params`)."""

    raw_dir: str
    params: dict[str, Any] = {}


class AlignDomain(Section):
    """Which sources an aligned repository joins (each named once)."""

    sources: list[str]

    @field_validator("sources")
    @classmethod
    def _named_once(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("lists no source")
        if len(set(value)) != len(value):
            raise ValueError(f"lists a source twice: {value}")
        return value


class SplitParams(Section):
    """Per-task split shares; the rest is test, which never has fewer than `min_test` queries.

    `min_test` is one number, or one per profile.
    """

    train: float = 0.6
    val: float = 0.2
    min_test: int | dict[Profile, int] = 3

    def for_profile(self, profile: str) -> SplitParams:
        """These shares with `min_test` resolved for one profile."""
        if isinstance(self.min_test, int):
            return self
        return self.model_copy(update={"min_test": self.min_test[profile]})


class ConstructParams(Section):
    """The four-stage construction flow."""

    domains: list[str]
    tasks: list[str] = []  # build only these task ids (all of the domains' tasks when empty)
    queries_per_task: dict[Profile, int]
    hypothesis_min_queries: int = Field(3, ge=1)  # so that the constant-answer gate can be measured
    split: SplitParams = SplitParams()
    max_jaccard: float = Field(0.7, gt=0, le=1)  # near-duplicate queries: entity-day Jaccard above
    verify_rel_tol: float = 1e-6
    concurrency: int = Field(2, ge=1)
    limits: SandboxLimits = SandboxLimits()
    warm: bool = True  # annotator runs fork from a warm interpreter in one sandbox per worker
    # finished labels and verifications, reused by a resumed or repeated build ("": none kept)
    resume_dir: str = ".cache/construct"
    dask_address: str | None = None  # label and verify on an existing Dask cluster (tcp://host:8786)


class EvaluateParams(Section):
    """Evaluation runs: which agents, which split, how many at once, how often infra errors retry."""

    agents: list[str]
    split: Literal["train", "val", "test"] = "test"
    concurrency: int = Field(2, ge=1)
    infra_retries: int = Field(2, ge=0)
    limits: SandboxLimits = SandboxLimits()
    dask_address: str | None = None  # run queries on an existing Dask cluster (tcp://host:8786)


class ValidityGates(Section):
    """Thresholds of the validity suite (scores are 0-100 per task on the evaluated split)."""

    oracle_min: float = 99.0
    floor_max: float = 2.0
    reference_max: float = 40.0
    constant_max_share: float = Field(1 / 3, ge=0, le=1)
    # ... judged on a task with at least this many kept queries: on fewer, two neighbouring scopes
    # agreeing within tolerance is a coincidence the share cannot tell from a constant gold
    constant_min_queries: int = Field(6, ge=1)
    # A candidate's overall score must exceed the best reference agent's overall by this many points.
    candidate_margin: float = Field(30.0, ge=0)


class HypothesisGates(Section):
    """MoSciBench's no-data bounds over all hypothesis queries (exact-match rate in %).

    NoDataGuess scored 0-10.5 % there; the candidates must match more than both guessers.
    """

    nodata: str = "nodata"
    prior: str | None = None  # the domain-knowledge guesser (agent kind `prior`); None: not gated
    nodata_max: float = Field(5.0, ge=0, le=100)
    prior_max: float = Field(10.0, ge=0, le=100)


class ValidityParams(Section):
    """Which agents play which role in the validity suite, and its gates."""

    oracle: str = "oracle"
    floors: list[str] = ["fabricate", "nodata", "defensive"]
    references: list[str] = []
    candidates: list[str] = []
    gates: ValidityGates = ValidityGates()
    hypothesis: HypothesisGates = HypothesisGates()


class JudgeParams(Section):
    """MoSciBench's modeling-reasonableness judge (optional; `model: null` turns it off)."""

    model: str | None = None
    base_url: str = Field("https://api.openai.com/v1", pattern=r"^https?://")
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = Field(512, ge=16)
    seed: int | None = 0
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(4, ge=0)
    concurrency: int = Field(4, ge=1)


class GeneralizationPair(Section):
    """Two configurations of one agent: trained per task and trained per category (ST-Bench gen)."""

    task_trained: str
    category_trained: str


class ScoringParams(Section):
    """Intervals and comparisons of `score@<agent>` and `compare`."""

    resamples: int = Field(1000, ge=100)  # bootstrap resamples over queries within tasks
    level: float = Field(0.95, gt=0, lt=1)
    seed: int = 0
    baseline: str | None = None  # compare: every agent against this one (ST-Bench's SA)
    generalizability: list[GeneralizationPair] = []


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


class Creator(Section):
    """A person credited in the release's Croissant file."""

    name: str
    url: str | None = None


class CardParams(Section):
    """What only the publisher can say about a release (`card`: processed/release/)."""

    name: str = "scibench"
    description: str = "Benchmark tasks for AI agents that analyse scientific data."
    version: str | None = None  # None: the scibench package's version
    url: str | None = None  # where the release is published
    license: str | None = None  # an SPDX id or a URL; None: not chosen yet (the card says so)
    creators: list[Creator] = []
    cite_as: str | None = None  # a BibTeX entry
    date_published: date | None = None
    base_url: str | None = None  # prefix of contentUrl (None: paths relative to croissant.json)


class AgentParams(Section):
    """One configured agent: its kind (a key of `stages.evaluation.agents.AGENTS`) and kind-specific options."""

    kind: str
    options: dict[str, Any] = {}
    concurrency: int | None = Field(None, ge=1)  # queries in flight (default evaluate.concurrency)


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


with warnings.catch_warnings():
    # `construct` is the stage family's name in params.yaml; it shadows a deprecated BaseModel
    # classmethod nobody here calls.
    warnings.simplefilter("ignore", UserWarning)

    class ProjectParams(Section):
        """The whole of params.yaml."""

        profile: Profile
        synthesize: dict[str, SynthesizeSource]
        ingest: dict[str, IngestSource]
        align: dict[str, AlignDomain]
        construct: ConstructParams
        evaluate: EvaluateParams
        agents: dict[str, AgentParams]
        validity: ValidityParams = ValidityParams()
        prices: PriceTable | None = None
        scoring: ScoringParams = ScoringParams()
        judge: JudgeParams = JudgeParams()
        card: CardParams = CardParams()
        generate: GenerateParams = GenerateParams()


class ParamsError(ValueError):
    """params.yaml is unreadable or invalid; the message names the file and the key."""


def load_params(path: Path = Path("params.yaml")) -> ProjectParams:
    """Read and validate params.yaml (whole file, every section)."""
    try:
        raw = read_yaml(path)
        params = ProjectParams.model_validate(raw)
    except (OSError, yaml.YAMLError, ValidationError) as error:
        raise ParamsError(f"{path}: {error}") from error
    unknown = sorted(set(params.evaluate.agents) - set(params.agents))
    if unknown:
        raise ParamsError(f"{path}: evaluate.agents names unconfigured agents {unknown}")
    roles = params.validity
    unevaluated = sorted({roles.oracle, *roles.floors, *roles.references, *roles.candidates}
                         - set(params.evaluate.agents))
    if unevaluated:
        raise ParamsError(f"{path}: validity names agents that evaluate.agents does not run {unevaluated}")
    scoring = params.scoring
    compared = {scoring.baseline} - {None}
    compared |= {name for pair in scoring.generalizability for name in (pair.task_trained, pair.category_trained)}
    unevaluated = sorted(compared - set(params.evaluate.agents))
    if unevaluated:
        raise ParamsError(f"{path}: scoring names agents that evaluate.agents does not run {unevaluated}")
    auto = params.generate.auto
    named = {*params.generate.floors, *([auto.solver] if auto.solver != "heuristic" else [])}
    unconfigured = sorted(named - set(params.agents))
    if unconfigured:
        raise ParamsError(f"{path}: generate names agents that `agents` does not configure {unconfigured}")
    for domain, section in params.align.items():
        missing = sorted(set(section.sources) - set(params.ingest))
        if missing:
            raise ParamsError(f"{path}: align.{domain}.sources names sources without an ingest section {missing}")
    return params
