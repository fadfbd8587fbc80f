"""What a task asks for and how it is graded: named metrics (ST-Bench) or a hypothesis (MoSciBench).

A metric has a target (`> 0.3`, or a direction) and may be recomputed from the agent's artifact
(`GradeSpec`) and compared with reference models; a hypothesis is one typed answer compared with
the gold by a comparator and a tolerance, which a bootstrap may widen (`BootstrapSpec`).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, model_validator

from stages.catalog_scopes import Strict

TARGET_PATTERN = re.compile(r"^\s*(>=|<=|>|<|==)\s*(-?\d+(\.\d+)?([eE]-?\d+)?)\s*$")
DIRECTIONAL_TARGETS = ("lower is better", "higher is better")


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
