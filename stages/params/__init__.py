"""params.yaml as a validated model. Only entry points call `load_params`; they pass plain values down.

Every section forbids unknown keys, so a typo fails fast and names the key. Source- and agent-specific
blocks are validated by the `Params` model of the module the registry names. The sections live by
area: `data` (synthesize, ingest, align), `construction`, `evaluation` (evaluate, agents, prices),
`scoring` (validity, judge, scoring), `generation` (generate) and `card`; the sandbox's limits are
`stages.sandbox.limits.SandboxLimits`. Their names are re-exported here.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import yaml
from pydantic import ValidationError

from stages.params.card import CardParams, Creator
from stages.params.construction import ConstructParams, SplitParams
from stages.params.data import AlignDomain, IngestSource, SynthesizeSource
from stages.params.evaluation import AgentParams, EvaluateParams, Generation, ModelPrice, PriceTable
from stages.params.generation import AutoParams, GenerateParams, GeneratorParams, SdaParams
from stages.params.optimization import BASELINE_RUN, MethodBudget, OptimizeParams
from stages.params.scoring import (
    GeneralizationPair,
    HypothesisGates,
    JudgeParams,
    ScoringParams,
    ValidityGates,
    ValidityParams,
)
from stages.params.section import Profile, Section
from stages.yamlfile import read_yaml

__all__ = [
    "BASELINE_RUN", "AgentParams", "AlignDomain", "AutoParams", "CardParams", "ConstructParams", "Creator",
    "EvaluateParams", "GeneralizationPair", "GenerateParams", "Generation", "GeneratorParams", "HypothesisGates",
    "IngestSource", "JudgeParams", "MethodBudget", "ModelPrice", "OptimizeParams", "ParamsError", "PriceTable",
    "Profile", "ProjectParams", "ScoringParams", "SdaParams", "Section", "SplitParams", "SynthesizeSource",
    "ValidityGates", "ValidityParams", "load_params",
]


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
        optimize: OptimizeParams = OptimizeParams()


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
    clashing = sorted(set(params.optimize.runs) & set(params.agents))
    if clashing:
        raise ParamsError(f"{path}: optimize.runs {clashing} are also configured agents: a run is evaluated "
                          "under its own name")
    params.agents.update({run: learned_system(params.optimize, run) for run in params.optimize.runs})
    for domain, section in params.align.items():
        missing = sorted(set(section.sources) - set(params.ingest))
        if missing:
            raise ParamsError(f"{path}: align.{domain}.sources names sources without an ingest section {missing}")
    return params


def learned_system(settings: OptimizeParams, run: str) -> AgentParams:
    """The agent an optimize run hands in: the run's workflows on `optimize.model`, one per task.

    The baseline run's are the one-turn workflow on every task. Without a model the agent cannot be
    set up; the stages of the protocol skip first (`OptimizeParams.skipped`).
    """
    from stages.layout import OPTIMIZE

    return AgentParams(kind="llm", options=(settings.model or {}) | {"workflows": str(OPTIMIZE / run)},
                       concurrency=settings.concurrency)
