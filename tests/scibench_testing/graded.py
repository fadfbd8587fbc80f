"""Tiny graded task specs and frames for the grading tests (hand-sized, every value written out)."""

from __future__ import annotations

import io
from datetime import date, timedelta

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from stages.catalog import ArtifactSpec, GradeSpec, MetricSpec, TaskSpec, TruthSpec

KEY = "gauge_id"
PREDICTIONS = ArtifactSpec(file="predictions.parquet", key=[KEY, "date"], columns={"qsim_mm_d": "float"})
CLUSTERS = ArtifactSpec(file="clusters.parquet", key=[KEY], columns={"cluster": "int"})


def metric(name: str, function: str, column: str, aggregate: str = "pooled", target: str = "higher is better",
           agree_within: float = 0.05, references: tuple[str, ...] = (), margin: float = 0.0,
           margin_kind: str = "absolute") -> MetricSpec:
    """A graded metric with a one-word description."""
    return MetricSpec(name=name, description=name, target=target,
                      grade=GradeSpec(function=function, column=column, aggregate=aggregate,
                                      agree_within=agree_within),
                      references=list(references), margin=margin, margin_kind=margin_kind)


def graded_task(metrics: list[MetricSpec], artifact: ArtifactSpec = PREDICTIONS,
                truth: TruthSpec | None = None, reference_models: tuple[str, ...] = (),
                prompt: str = "Predict.", task_id: str = "tiny-graded") -> TaskSpec:
    """A minimal task spec around the given graded metrics (camels-like tables)."""
    return TaskSpec(
        id=task_id, domain="camels", category="prediction_modeling", difficulty="easy",
        modalities=["timeseries"], source={"citation": "a paper"}, prompt=prompt,
        data={"repository": "camels", "tables": {"timeseries": [KEY, "date", "qobs_mm_d"]}},
        scopes=["s"], answer={"metrics": metrics}, artifact=artifact,
        truth=truth or TruthSpec(kind="holdout", column="qobs_mm_d"),
        reference_models=list(reference_models))


def days(start: date, n: int) -> list[pd.Timestamp]:
    """`n` consecutive days from `start` as timestamps."""
    return [pd.Timestamp(start + timedelta(days=i)) for i in range(n)]


def parquet(data: pd.DataFrame | pa.Table) -> bytes:
    """The bytes of a Parquet file holding `data` (a frame is written without its index)."""
    table = data if isinstance(data, pa.Table) else pa.Table.from_pandas(data, preserve_index=False)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()
