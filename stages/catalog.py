"""The benchmark catalog: `catalog/<domain>/<task_id>/{task.yaml, reproduce.py}` as validated specs.

A task spec is pydantic with `extra="forbid"`: a typo in a task file fails the build, naming the file.
Scopes are defined once per domain in `catalog/<domain>/scopes.yaml` and referenced by name
(`stages.catalog_scopes`). Helper modules the domain's annotator scripts share live in
`catalog/<domain>/annotator_lib/`, and helpers every domain may use (reading the scope block,
the bootstrap, writing answers and checkpoints) in `catalog/annotator_common/`; they are part of
every task's hash and are mounted beside `reproduce.py` when it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from stages.catalog_scopes import CatalogError, Strict, load_scopes, read_yaml
from stages.hashing import content_hash

STBENCH_CATEGORIES = (
    "clustering", "cross_dataset_evaluation", "data_augmentation", "exploratory_analysis",
    "feature_analysis", "feature_label_correlation", "forecasting", "missing_value_imputation",
    "model_comparison", "model_distillation", "novel_metrics", "performance_stratification",
    "prediction_modeling", "sampling", "transfer_learning", "up_downscaling",
)
# MoSciBench's problem types (its five: causal inference, correlation analysis, pattern discovery,
# comparative analysis, trend analysis) plus the two general ones the first hypothesis tasks used.
HYPOTHESIS_TYPES = ("causal_inference", "correlation_analysis", "pattern_discovery",
                    "comparative_analysis", "trend_analysis", "hypothesis_testing",
                    "statistical_inference")
Category = Literal[STBENCH_CATEGORIES + HYPOTHESIS_TYPES]  # type: ignore[valid-type]

TARGET_PATTERN = re.compile(r"^\s*(>=|<=|>|<|==)\s*(-?\d+(\.\d+)?([eE]-?\d+)?)\s*$")
DIRECTIONAL_TARGETS = ("lower is better", "higher is better")
ANNOTATOR_LIB = "annotator_lib"  # catalog/<domain>/annotator_lib/*.py: mounted beside reproduce.py
ANNOTATOR_COMMON = "annotator_common"  # catalog/annotator_common/*.py: mounted for every domain


class Source(Strict):
    """The peer-reviewed work a task was adapted from. Hidden from agents."""

    citation: str
    doi: str | None = None


CAPABILITIES = Literal["modeling", "discovery", "optimization", "robustness"]
PIPELINE_STAGES = Literal["modeling", "data_analysis", "evaluation", "data_preparation"]
COGNITIVE_SKILLS = Literal["predictive", "diagnostic", "prescriptive", "descriptive"]
MAS_CHALLENGES = Literal["synthesis", "parallel_search", "long_horizon_planning", "error_recovery",
                         "decomposition"]


class Tags(Strict):
    """ST-Bench Appendix C.4 tag axes, with its vocabularies."""

    capability: list[CAPABILITIES] = []
    pipeline_stage: list[PIPELINE_STAGES] = []
    cognitive_skill: list[COGNITIVE_SKILLS] = []
    mas_challenge: list[MAS_CHALLENGES] = []


class GradeSpec(Strict):
    """How the harness computes a metric from the agent's artifact and the query's hidden truth.

    `function` names a metric of `stages.scoring.query.metrics` (`nse`, `kge`, `rmse`, ..., `silhouette`);
    `column` is the artifact column compared with the truth; `aggregate` is `median`/`mean` of the
    per-entity values or `pooled` (one value over every graded row).

    Before the metric: `timescale` averages truth and prediction per entity over calendar weeks,
    months or years (the graded rows of each period); `obs_quantile` keeps only the rows whose true
    value lies within that quantile range of the entity's true values (e.g. [0.9, 1.0]: high flows).
    """

    function: str
    column: str
    aggregate: Literal["median", "mean", "pooled"] = "pooled"
    timescale: Literal["step", "week", "month", "year"] = "step"
    obs_quantile: tuple[float, float] | None = None
    agree_within: float = Field(0.05, ge=0)  # honesty: |reported - recomputed| allowed ...
    agree_relative: float = Field(0.02, ge=0)  # ... plus this share of |recomputed|


class MetricSpec(Strict):
    """A named numeric metric with a target such as `> 0.3`.

    With `grade`, the harness recomputes the value from the artifact (the reported one is only
    compared, for the honesty rate). With `references`, the value must also beat every named
    reference model of the query by more than `margin` (in the metric's better direction) to pass,
    and every other standard model the build graded on the query at all (`beat_other_models`);
    a value equal to a reference's never passes, whatever the margin. `beat_other_models: false`
    is for a metric that grades a standard model the task itself asks for (the linear model of a
    model comparison), or a pooled signed error (a total volume error) where one of the many
    graded blends is unbiased by chance: no other model is compared there, and the task's other
    metrics must keep a cheap answer from passing.
    """

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    target: str
    unit: str = "1"
    valid_range: tuple[float | None, float | None] = (None, None)
    no_skill: float | None = None
    grade: GradeSpec | None = None
    references: list[str] = []
    margin: float = Field(0.0, ge=0.0)
    margin_kind: Literal["absolute", "relative"] = "absolute"  # relative: margin x |reference|
    beat_other_models: bool = True

    @model_validator(mode="after")
    def _target_parses(self) -> MetricSpec:
        if self.target not in DIRECTIONAL_TARGETS and not TARGET_PATTERN.match(self.target):
            raise ValueError(f"metric {self.name}: unreadable target {self.target!r}")
        if self.references and self.grade is None:
            raise ValueError(f"metric {self.name}: reference models need a `grade` to compare with")
        return self


class BootstrapSpec(Strict):
    """Tolerance from sampling uncertainty: the annotator writes `work/bootstrap.json`.

    The file holds `{"values": [...]}`, the statistic on resamples of the scope's entities. The
    query's tolerance is `max(abs_tol, tolerance_sd * sd)`; a query whose bootstrap sd exceeds
    `max_relative_sd * |gold|`, or whose replicates take the gold's sign less than `min_sign_share`
    of the time, is discarded as unstable.
    """

    tolerance_sd: float = Field(gt=0)
    max_relative_sd: float = Field(0.5, gt=0)
    min_sign_share: float = Field(0.95, ge=0.5, le=1.0)


class HypothesisSpec(Strict):
    """A single typed answer compared with the gold by a comparator and a tolerance.

    `prior` is what a reader of the literature would answer without the data (a textbook value,
    the direction and rough size a study reports): the answer of the `prior` agent, MoSciBench's
    NoDataGuess with domain knowledge. It is never staged; a task whose golds it matches fails
    validity.
    """

    format: Literal["number", "list", "boolean", "category", "coordinates"]
    description: str
    comparator: Literal["=", ">", ">=", "<", "<="] = "="
    rel_tol: float = 0.10
    abs_tol: float = 0.0
    categories: list[str] | None = None
    valid_range: tuple[float | None, float | None] = (None, None)
    bootstrap: BootstrapSpec | None = None
    prior: Any = None


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


ArtifactDtype = Literal["float", "int", "str", "date"]


class ArtifactSpec(Strict):
    """What a metric task's agent hands in besides `answer.json`: a Parquet file in `work/`.

    `key` columns identify a row (their dtypes come from the repository); `columns` are the values.
    Which rows are required follows from the task's truth (`stages.scoring.query.truth`).
    """

    file: str = Field(pattern=r"^[a-z][a-z0-9_]*\.parquet$")
    key: list[str] = Field(min_length=1)
    columns: dict[str, ArtifactDtype] = Field(min_length=1)
    descriptions: dict[str, str] = {}


# The per-entity profile features a `profiles` truth may name, with the definitions its prompt
# states; stages.scoring.query.profiles computes them.
PROFILE_DEFINITIONS = {
    "mean": "the mean of the observed values",
    "std": "the population standard deviation of the observed values",
    "cv": "std / |mean| (0 when the mean is 0)",
    "q10": "the 10 % quantile of the observed values (linear interpolation)",
    "q90": "the 90 % quantile of the observed values (linear interpolation)",
    "lag1": "the Pearson correlation of consecutive observed values (0 for a constant series)",
    "seasonal_amplitude": "the largest minus the smallest of the calendar-month means",
    "trend": "the least-squares slope of the values on time, per year",
}


class TruthSpec(Strict):
    """The query's hidden truth, withheld from the public files at staging time.

    - `holdout`: `column` is withheld (null) on the last `test_share` of the scope's period (days,
      or calendar years when `time` is a year column); the truth is its observed values there.
    - `hidden_gaps`: runs of `run_days` consecutive observed time steps per entity, about `fraction`
      of its observed steps, drawn with a seed from the query id, are withheld (null).
    - `held_out_entities`: `column` is withheld on every time step of a seeded `test_share` of
      the scope's entities (prediction where nothing was measured).
    - `signatures`: nothing is withheld; the truth is the benchmark's hydrological signature space
      of the scope's entities (`stages.scoring.query.signatures`), in which a partition is graded.
    - `profiles`: nothing is withheld; the truth is the per-entity feature space `features` of
      `column` (`stages.scoring.query.profiles`), in which a partition is graded.
    - `labels`: `column` of `table` (the entities table) is removed from the public files; the
      truth is each entity's label.

    `time` is the time column of `table`: `date`, `timestamp_start` or a year column.
    """

    kind: Literal["holdout", "hidden_gaps", "held_out_entities", "signatures", "profiles", "labels"]
    table: str = "timeseries"
    column: str
    time: Literal["date", "timestamp_start", "harvest_year", "year"] = "date"
    test_share: float = Field(0.3, gt=0, lt=1)
    fraction: float = Field(0.1, gt=0, lt=0.5)
    run_days: tuple[int, int] = (5, 30)
    features: list[str] = []

    @model_validator(mode="after")
    def _features_fit(self) -> TruthSpec:
        if self.kind == "profiles":
            unknown = sorted(set(self.features) - set(PROFILE_DEFINITIONS))
            if unknown or not self.features:
                raise ValueError(f"profiles truth needs features from {list(PROFILE_DEFINITIONS)}, "
                                 f"got {self.features}")
        elif self.features:
            raise ValueError(f"`features` belongs to a profiles truth, not {self.kind}")
        return self


class NativeSpec(Strict):
    """A modality staged apart, in the format it is analysed in, for the agent to align itself.

    - `netcdf_grid`: the repository's gridded NetCDF file cut to the query's period and to the
      smallest lat/lon rectangle around its cells; cells of the rectangle outside the scope are
      fill. `variables` names the grid variables kept.
    - `geotiff`: one GeoTIFF per layer (`relief`, `ndvi_<yyyymmdd>`), the mosaic cut to the query's
      footprint (plus `margin_deg`) in the mosaic's own projection; no per-entity statistic.
    - `sdf`: the structures of the query's molecules as an SD file (V2000, 2-D coordinates), each
      record titled from an entity column and carrying no key, identifier or property;
      `variables` are the structure column (SMILES) and the title column, in that order.

    - `tenx_h5`: the query's cells of a 10x count matrix (Cell Ranger v3 HDF5), barcodes and root
      attributes as the matrix writes them; `variables` names the feature types kept
      (`Gene Expression`, `Antibody Capture`).

    `path` is where it lands under `data/` (a folder for `geotiff`, a file otherwise).
    """

    kind: Literal["netcdf_grid", "geotiff", "sdf", "tenx_h5"]
    path: str = Field(pattern=r"^[a-z][a-z0-9_]*(\.(nc|sdf|h5))?$")
    variables: list[str] = Field(min_length=1)
    margin_deg: float = Field(0.0, ge=0.0, le=5.0)


class DataSpec(Strict):
    """Repository tables and columns staged for the agent as public files, and native modalities."""

    repository: str
    tables: dict[str, list[str]]
    native: list[NativeSpec] = []


class CheckpointSpec(Strict):
    """An intermediate the agent may write, compared with the annotator's to attribute a wrong answer.

    `stage` says which step it checks: `alignment` (the joined keys: which entities were matched,
    and the values carried across the join) or `modeling` (the per-entity feature or fit the answer
    is computed from). Rows are matched on `key`; `columns` are compared within `abs_tol` +
    `rel_tol` x |annotator's value|; a checkpoint matches when the keys are the same set and at
    least `min_share` of the compared values agree.
    """

    file: str = Field(pattern=r"^[a-z][a-z0-9_]*\.parquet$")
    stage: Literal["alignment", "modeling"]
    description: str
    key: list[str] = Field(min_length=1)
    columns: list[str] = Field(min_length=1)
    abs_tol: float = Field(0.0, ge=0.0)
    rel_tol: float = Field(0.05, ge=0.0)
    min_share: float = Field(0.9, gt=0.0, le=1.0)


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
    artifact: ArtifactSpec | None = None
    truth: TruthSpec | None = None
    reference_models: list[str] = []
    checkpoints: list[CheckpointSpec] = []

    @model_validator(mode="after")
    def _checkpoints_are_distinct(self) -> TaskSpec:
        files = [c.file for c in self.checkpoints]
        stages = [c.stage for c in self.checkpoints]
        if len(set(files)) != len(files) or len(set(stages)) != len(stages):
            raise ValueError(f"checkpoints need distinct files and one per stage: {files} {stages}")
        if self.artifact is not None and self.artifact.file in files:
            raise ValueError(f"checkpoint {self.artifact.file} is also the artifact")
        return self

    @model_validator(mode="after")
    def _grading_fits(self) -> TaskSpec:
        graded = [m for m in self.answer.metrics or [] if m.grade is not None]
        if graded and (self.artifact is None or self.truth is None):
            raise ValueError("graded metrics need an `artifact` and a `truth`")
        for metric in graded:
            if self.artifact and metric.grade.column not in self.artifact.columns:
                raise ValueError(f"metric {metric.name}: artifact has no column {metric.grade.column!r}")
            unknown = sorted(set(metric.references) - set(self.reference_models))
            if unknown:
                raise ValueError(f"metric {metric.name}: references {unknown} are not in reference_models")
        return self


@dataclass(frozen=True)
class CatalogTask:
    """A task spec with the files that define it and its content hash."""

    spec: TaskSpec
    folder: Path
    reproduce: Path
    task_hash: str
    annotator_lib: tuple[Path, ...] = ()


def load_task(folder: Path) -> CatalogTask:
    """Load and validate `folder/task.yaml`; the folder name must equal the task id."""
    path = folder / "task.yaml"
    raw = read_yaml(path)
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as error:
        raise CatalogError(f"{path}: {error}") from error
    if spec.id != folder.name:
        raise CatalogError(f"{path}: id {spec.id!r} differs from its folder name {folder.name!r}")
    reproduce = folder / "reproduce.py"
    if not reproduce.is_file():
        raise CatalogError(f"{folder}: missing reproduce.py (the annotator reproduction script)")
    library = tuple(sorted([*(folder.parent / ANNOTATOR_LIB).glob("*.py"),
                            *(folder.parent.parent / ANNOTATOR_COMMON).glob("*.py")]))
    # The scope list is the task's query pool, not the task: adding a scope adds queries and keeps
    # every other query's id (and its label, journal records and scores) as it was.
    identity = {name: value for name, value in raw.items() if name != "scopes"} if isinstance(raw, dict) else raw
    task_hash = content_hash([identity, reproduce.read_text(), [[p.name, p.read_text()] for p in library]])
    return CatalogTask(spec=spec, folder=folder, reproduce=reproduce, task_hash=task_hash,
                       annotator_lib=library)


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
