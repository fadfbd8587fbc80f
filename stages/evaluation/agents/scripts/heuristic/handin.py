"""What a method hands in, and how it is written: the artifact in its declared schema and answer.json.

The artifact holds exactly the declared key and value columns, in that order, with the declared
types (`int` labels, `float` values, keys as text, dates as dates, years as whole numbers,
instants as timestamps), one row per owed row.
answer.json holds the reported metrics (only finite numbers; a metric the method could not
estimate is left out) or the hypothesis answer.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from heuristic.profile import YEAR_NAMES


@dataclass(frozen=True)
class Handin:
    """A method's result: the artifact rows (None when there is none) and the answer document."""

    artifact: pd.DataFrame | None
    answer: dict = field(default_factory=dict)


def metrics_answer(metrics: dict[str, float | None]) -> dict:
    """`{"metrics": ...}` with only the finite values."""
    return {"metrics": {name: float(value) for name, value in metrics.items()
                        if value is not None and math.isfinite(value)}}


def conform(frame: pd.DataFrame, spec: dict, time_key: str | None) -> pd.DataFrame:
    """The artifact frame in the declared column order and types."""
    out = pd.DataFrame(index=frame.index)
    for column in spec["key"]:
        values = frame[column]
        if column != time_key:
            out[column] = values.astype(str)
        elif column in YEAR_NAMES:
            out[column] = pd.to_datetime(values).dt.year.astype("int64")
        elif column == "date":
            out[column] = pd.to_datetime(values).dt.date
        else:  # an instant (e.g. the start of a half-hour), in UTC
            out[column] = pd.to_datetime(values).astype("datetime64[ns]")
    for column, dtype in spec["columns"].items():
        values = pd.to_numeric(frame[column], errors="coerce")
        if dtype == "int":
            out[column] = values.fillna(0).round().astype("int64")
        else:
            out[column] = values.astype(float)
    return out.reset_index(drop=True)


def write_handin(work: Path, handin: Handin, spec: dict | None, time_key: str | None) -> None:
    """Write the artifact (when the prompt declares one and the method made it) and answer.json."""
    work.mkdir(parents=True, exist_ok=True)
    if spec is not None and handin.artifact is not None:
        conform(handin.artifact, spec, time_key).to_parquet(work / spec["file"], index=False)
    (work / "answer.json").write_text(json.dumps(handin.answer, indent=2, sort_keys=True))
