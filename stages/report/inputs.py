"""What the report reads: the score, compare and validity stages' JSON, validated on the way in.

Every agent in `evaluate.agents` must have `processed/metrics/<agent>.json` and `<agent>.tasks.json`;
a missing file is an error naming it and the stage that writes it, never an agent left out. Fields
the scoring suite may not have written yet (`score_ci`, `usage`, `cuts`, `infra`) are optional and
show as "—" in the report; keys the report does not use are ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from stages.params import ValidityGates


class Record(BaseModel):
    """Base of the input models: frozen, unknown keys ignored (other stages own the schema)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class Interval(Record):
    """A confidence interval; `level` (0-1) and `resamples` only where the producer records them."""

    low: float | None = None
    high: float | None = None
    level: float | None = None
    resamples: int | None = None


class Honesty(Record):
    """Honesty verdict counts and rate (agreeing share of the gradable artifacts)."""

    agrees: int = 0
    disagrees: int = 0
    unreported: int = 0
    no_artifact: int = 0
    rate: float | None = None


class Usage(Record):
    """Summed model usage and time of one agent's run; `cost_usd` is None when unknown.

    `tokens` is prompt + completion; the breakdown is there when the model server reported it.
    `limits` counts the queries that stopped at each agent bound (max_turns, token_budget, ...).
    """

    tokens: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    wall_seconds: float | None = None
    agent_seconds: float | None = None
    limits: dict[str, int] = {}
    calls: int | None = None  # model calls through the harness's proxy
    queries_with_usage_flags: int | None = None  # the server reported missing or implausible usage
    models_reported: list[str] = []  # model ids the endpoint reported

    def total_tokens(self) -> int | None:
        """`tokens`, else prompt + completion when both are known."""
        if self.tokens is not None:
            return self.tokens
        if self.prompt_tokens is None or self.completion_tokens is None:
            return None
        return self.prompt_tokens + self.completion_tokens


class Errors(Record):
    """MoSciBench error attribution of the failed scored queries: counts and shares per class."""

    counts: dict[str, int] = {}
    shares: dict[str, float | None] = {}


class Attribution(Record):
    """Failed runs of the checkpointed tasks by checkpoint class (`stages.scoring.query.attribution`)."""

    n_runs: int = 0
    n_failed: int = 0
    counts: dict[str, int] = {}
    shares_of_runs: dict[str, float | None] = {}
    shares_of_failed: dict[str, float | None] = {}
    moscibench_shares_of_runs: dict[str, float] = {}
    judged_unattributed: dict[str, int] = {}


class ExactMatch(Record):
    """MoSciBench exact-match rate and Exec rate over the scored hypothesis queries."""

    n_queries: int = 0
    rate: float | None = None
    exec_rate: float | None = None


class Reasonableness(Record):
    """MoSciBench modeling reasonableness (MR): an LLM judge's mean 1-5 score over judged hand-ins."""

    model: str | None = None
    judged: int = 0
    judge_unparseable: int = 0
    judge_infra_error: int = 0
    mean: float | None = None


class Cut(Record):
    """The score of one value of a cut axis (a domain, a difficulty, a tag)."""

    score: float | None = None
    score_ci: Interval | None = None
    n_tasks: int = 0


class Infra(Record):
    """Infrastructure retries of one run."""

    retried_queries: int = 0
    extra_attempts: int = 0
    infra_error_queries: int = 0


class Epochs(Record):
    """Repeated runs (`evaluate.epochs`): each epoch's score, their standard error and spread."""

    n: int = 1
    scores: list[float | None] = []
    se: float | None = None  # None for one epoch
    spread: float | None = None  # max - min


class AgentMetrics(Record):
    """`processed/metrics/<agent>.json`."""

    agent: str
    split: str
    score: float | None
    n_tasks: int
    n_queries: int
    outcomes: dict[str, int]
    exec_rate: float | None = None
    realistic_rate: float | None = None
    pass_rate_given_realistic: float | None = None
    reward_mean: float | None = None
    honesty: Honesty | None = None
    version: dict = {}
    score_ci: Interval | None = None
    usage: Usage | None = None
    cuts: dict[str, dict[str, Cut]] = {}
    infra: Infra | None = None
    errors: Errors | None = None
    exact_match: ExactMatch | None = None
    attribution: Attribution | None = None
    modeling_reasonableness: Reasonableness | None = None  # only when a judge is configured
    epochs: Epochs = Epochs()  # scored before repeated runs existed: one epoch


class TaskEntry(Record):
    """One task's scores in `<agent>.tasks.json`."""

    score: float | None
    n_queries: int
    outcomes: dict[str, int]
    honesty: Honesty | None = None
    epoch_scores: list[float | None] = []  # only for an agent run in several epochs
    pass_at_k: dict[str, float] = {}  # k -> pass@k, hypothesis tasks only


class AgentTasks(Record):
    """`processed/metrics/<agent>.tasks.json`."""

    agent: str
    tasks: dict[str, TaskEntry]


class ComparedAgent(Record):
    """One agent's per-query costs in `compare.json`."""

    wall_seconds_per_query: float | None = None
    tokens_per_query: float | None = None
    cost_usd_per_query: float | None = None
    parallelism: float | None = None


class Versus(Record):
    """One agent against the baseline (SPEC §5: win rate, Δperf, cost ratios ρ, efficiencies η)."""

    win_rate: float | None = None
    delta_perf: float | None = None
    delta_ci: Interval | None = None
    rho_time: float | None = None
    rho_token: float | None = None
    eta_time: float | None = None
    eta_token: float | None = None


class Comparison(Record):
    """`processed/metrics/compare.json`; without a baseline (`scoring.baseline`) nothing is versus."""

    baseline: str | None = None
    split: str
    agents: dict[str, ComparedAgent] = {}
    versus_baseline: dict[str, Versus] = {}
    frontier: list[str] = []
    generalizability: list[dict] = []


class ValidityTask(Record):
    """One task of the validity report."""

    scores: dict[str, float | None]
    gold_spread: dict = {}


class ValidityReport(Record):
    """`processed/reports/validity.json` (stages/scoring/validity.py)."""

    agents: list[str]
    tasks: dict[str, ValidityTask]
    overall: dict[str, float]
    by_category: dict[str, dict[str, float]] = {}
    by_domain: dict[str, dict[str, float]] = {}
    catalog: dict = {}
    gates: ValidityGates
    failures: list[str]
    passed: bool


@dataclass(frozen=True)
class ReportInputs:
    """Everything one report shows; `agents` in `evaluate.agents` order."""

    agents: list[str]
    metrics: dict[str, AgentMetrics]
    tasks: dict[str, AgentTasks]
    comparison: Comparison
    validity: ValidityReport
    generated: dict = field(default_factory=dict)  # the generated benchmark's summaries (generated_tables)
    systems: Any = None  # ST-Bench's protocol (report/systems.py `Systems`), when compare_systems ran


class MissingInputError(FileNotFoundError):
    """An input file is missing; the message names the file and the stage that writes it."""


def read_model(path: Path, model: type[Record], stage: str) -> Record:
    """Read and validate one JSON input, or fail naming the file and `dvc repro <stage>`."""
    if not path.exists():
        raise MissingInputError(f"{path} is missing: run `dvc repro {stage}` first")
    return model.model_validate(json.loads(path.read_text()))


def load_metrics(agents: list[str], metrics_dir: Path) -> dict[str, AgentMetrics]:
    """Every agent's `<agent>.json`, or fail naming the first missing one and `score@<agent>`."""
    return {a: read_model(metrics_dir / f"{a}.json", AgentMetrics, f"score@{a}") for a in agents}


def load_validity(reports_dir: Path) -> ValidityReport:
    """`validity.json`, or fail naming it and the `validity` stage."""
    return read_model(reports_dir / "validity.json", ValidityReport, "validity")


def load_generated(generated_dir: Path, metrics_dir: Path) -> dict:
    """The summaries the generated benchmark's stages wrote (each absent file left out)."""
    files = {"sda": generated_dir / "sda" / "summary.json", "sda_real": generated_dir / "sda_real" / "summary.json",
             "auto": generated_dir / "auto" / "report.json", "floors": metrics_dir / "generated_validity.json"}
    return {key: json.loads(path.read_text()) for key, path in files.items() if path.is_file()}


def load_inputs(agents: list[str], metrics_dir: Path, reports_dir: Path,
                generated_dir: Path | None = None) -> ReportInputs:
    """Read every input of the report.

    Args:
        agents: The evaluated agents (`evaluate.agents`); each must have both metrics files.
        metrics_dir: `processed/metrics` (agent metrics, `compare.json`).
        reports_dir: `processed/reports` (`validity.json`).
        generated_dir: `processed/generated`, whose summaries are shown when present (None: not shown).

    Raises:
        MissingInputError: A file is missing (the first one, in `agents` order).
    """
    metrics = load_metrics(agents, metrics_dir)
    tasks = {a: read_model(metrics_dir / f"{a}.tasks.json", AgentTasks, f"score@{a}") for a in agents}
    comparison = read_model(metrics_dir / "compare.json", Comparison, "compare")
    generated = load_generated(generated_dir, metrics_dir) if generated_dir is not None else {}
    return ReportInputs(list(agents), metrics, tasks, comparison, load_validity(reports_dir), generated)
