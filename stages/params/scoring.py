"""After the runs: the validity suite's roles and gates, the MR judge, intervals and comparisons."""

from __future__ import annotations

from pydantic import Field

from stages.params.section import Section


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
