"""The benchmark catalog: `catalog/<domain>/<task_id>/{task.yaml, reproduce.py}` as validated specs.

A task spec is pydantic with `extra="forbid"`: a typo in a task file fails the build, naming the file.
Scopes are defined once per domain in `catalog/<domain>/scopes.yaml` and referenced by name. Helper
modules the domain's annotator scripts share live in `catalog/<domain>/annotator_lib/`; they are part
of every task's hash and are mounted beside `reproduce.py` when it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stages.hashing import content_hash

STBENCH_CATEGORIES = (
    "clustering", "cross_dataset_evaluation", "data_augmentation", "exploratory_analysis",
    "feature_analysis", "feature_label_correlation", "forecasting", "missing_value_imputation",
    "model_comparison", "model_distillation", "novel_metrics", "performance_stratification",
    "prediction_modeling", "sampling", "transfer_learning", "up_downscaling",
)
HYPOTHESIS_TYPES = ("hypothesis_testing", "causal_inference", "statistical_inference")
Category = Literal[STBENCH_CATEGORIES + HYPOTHESIS_TYPES]  # type: ignore[valid-type]

TARGET_PATTERN = re.compile(r"^\s*(>=|<=|>|<|==)\s*(-?\d+(\.\d+)?([eE]-?\d+)?)\s*$")
DIRECTIONAL_TARGETS = ("lower is better", "higher is better")
ANNOTATOR_LIB = "annotator_lib"  # catalog/<domain>/annotator_lib/*.py: mounted beside reproduce.py


class Strict(BaseModel):
    """Base for everything parsed from YAML: unknown keys fail fast."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(Strict):
    """The peer-reviewed work a task was adapted from. Hidden from agents."""

    citation: str
    doi: str | None = None


class Tags(Strict):
    """ST-Bench Appendix C.4 tag axes."""

    capability: list[str] = []
    pipeline_stage: list[str] = []
    cognitive_skill: list[str] = []
    mas_challenge: list[str] = []


class MetricSpec(Strict):
    """A named numeric metric the agent reports, with a target such as `> 0.3`."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    target: str
    unit: str = "1"
    valid_range: tuple[float | None, float | None] = (None, None)
    no_skill: float | None = None

    @model_validator(mode="after")
    def _target_parses(self) -> MetricSpec:
        if self.target not in DIRECTIONAL_TARGETS and not TARGET_PATTERN.match(self.target):
            raise ValueError(f"metric {self.name}: unreadable target {self.target!r}")
        return self


class HypothesisSpec(Strict):
    """A single typed answer compared with the gold by a comparator and a tolerance."""

    format: Literal["number", "list", "boolean", "category", "coordinates"]
    description: str
    comparator: Literal["=", ">", ">=", "<", "<="] = "="
    rel_tol: float = 0.10
    abs_tol: float = 0.0
    categories: list[str] | None = None
    valid_range: tuple[float | None, float | None] = (None, None)


class AnswerSpec(Strict):
    """Exactly one of: named metrics (ST-Bench) or a hypothesis answer (MoSciBench)."""

    metrics: list[MetricSpec] | None = Field(None, min_length=1)
    hypothesis: HypothesisSpec | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> AnswerSpec:
        if (self.metrics is None) == (self.hypothesis is None):
            raise ValueError("answer needs exactly one of `metrics` or `hypothesis`")
        names = [m.name for m in self.metrics or []]
        if len(names) != len(set(names)):
            raise ValueError(f"metric names repeat: {names}")
        return self


class DataSpec(Strict):
    """Repository tables and columns staged for the agent as public files."""

    repository: str
    tables: dict[str, list[str]]


class TaskSpec(Strict):
    """One benchmark task, as written in `task.yaml`."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    version: int = 1
    domain: str
    category: Category
    difficulty: Literal["easy", "medium", "hard"]
    tags: Tags = Tags()
    modalities: list[str]
    source: Source
    prompt: str
    data: DataSpec
    scopes: list[str]
    min_entities: int = 1
    min_years: int = 1
    answer: AnswerSpec


class ScopeSpec(Strict):
    """A named slice of a domain: which entities and which period a query covers (ST-Bench §2.2)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$")
    kind: Literal["geographic", "temporal", "sample_size", "attribute"]
    description: str
    citation: str = ""
    entities: dict[str, Any] = {}
    years: tuple[int, int] | None = None
    sample: int | None = None
    seed: int = 0


class ScopeLibrary(Strict):
    """`catalog/<domain>/scopes.yaml`."""

    scopes: list[ScopeSpec]


@dataclass(frozen=True)
class CatalogTask:
    """A task spec with the files that define it and its content hash."""

    spec: TaskSpec
    folder: Path
    reproduce: Path
    task_hash: str
    annotator_lib: tuple[Path, ...] = ()


class CatalogError(ValueError):
    """A catalog file is missing or invalid; the message names the file."""


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise CatalogError(f"{path}: {error}") from error


def load_task(folder: Path) -> CatalogTask:
    """Load and validate `folder/task.yaml`; the folder name must equal the task id."""
    path = folder / "task.yaml"
    try:
        spec = TaskSpec.model_validate(_read_yaml(path))
    except ValidationError as error:
        raise CatalogError(f"{path}: {error}") from error
    if spec.id != folder.name:
        raise CatalogError(f"{path}: id {spec.id!r} differs from its folder name {folder.name!r}")
    reproduce = folder / "reproduce.py"
    if not reproduce.is_file():
        raise CatalogError(f"{folder}: missing reproduce.py (the annotator reproduction script)")
    library = tuple(sorted((folder.parent / ANNOTATOR_LIB).glob("*.py")))
    task_hash = content_hash([path.read_text(), reproduce.read_text(),
                              [[p.name, p.read_text()] for p in library]])
    return CatalogTask(spec=spec, folder=folder, reproduce=reproduce, task_hash=task_hash,
                       annotator_lib=library)


def load_scopes(domain_dir: Path) -> dict[str, ScopeSpec]:
    """Load `scopes.yaml` of a domain as a dict by scope name."""
    path = domain_dir / "scopes.yaml"
    try:
        library = ScopeLibrary.model_validate(_read_yaml(path))
    except ValidationError as error:
        raise CatalogError(f"{path}: {error}") from error
    return {scope.name: scope for scope in library.scopes}


def load_catalog(catalog_dir: Path, domains: list[str]) -> list[CatalogTask]:
    """Load every task of the given domains, sorted by id; unknown scope names fail."""
    tasks = []
    for domain in domains:
        domain_dir = catalog_dir / domain
        scopes = load_scopes(domain_dir)
        for folder in sorted(p for p in domain_dir.iterdir() if (p / "task.yaml").exists()):
            task = load_task(folder)
            unknown = sorted(set(task.spec.scopes) - set(scopes))
            if unknown:
                raise CatalogError(f"{folder / 'task.yaml'}: unknown scopes {unknown}")
            tasks.append(task)
    return sorted(tasks, key=lambda t: t.spec.id)
