"""A task as `task.yaml` states it: what it is, the data it stages, its hidden truth (`TaskSpec`).

Every model is pydantic with `extra="forbid"` (`Strict`): a typo in a task file fails the build,
naming the file. The answer the task asks for and how it is graded are `stages.catalog.answer`'s.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.catalog.answer import AnswerSpec
from stages.catalog_scopes import Strict

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
