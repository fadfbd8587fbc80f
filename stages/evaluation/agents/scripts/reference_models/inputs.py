"""What a reference model reads and hands back: the prompt's blocks, the scoped tables, the rows owed.

Part of the standalone `reference_models` package (numpy, pandas and pyarrow only; mounted at /agent).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

BLOCKS = {name: re.compile(rf"## {name}\n.*?```json\n(?P<json>.*?)\n```", re.DOTALL)
          for name in ("Scope", "Artifact")}
YEARS = ("harvest_year", "year")
INSTANTS = ("date", "timestamp_start")


def read_block(prompt: str, name: str) -> dict:
    """The JSON of the prompt's `## Scope` or `## Artifact` block."""
    match = BLOCKS[name].search(prompt)
    if match is None:
        raise ValueError(f"prompt has no '## {name}' block")
    return json.loads(match.group("json"))


def load_scoped(data_dir: Path, scope: dict) -> dict[str, pd.DataFrame]:
    """Every Parquet table of `data/`, restricted to the scope's entities (and period)."""
    tables = {path.stem: pd.read_parquet(path) for path in sorted(data_dir.glob("*.parquet"))}
    return load_tables(tables, scope)


def load_tables(raw: dict[str, pd.DataFrame], scope: dict) -> dict[str, pd.DataFrame]:
    """Tables restricted to the scope's entities and period; keys as text, instants as timestamps."""
    key, tables = scope["entity_key"], {}
    start, end = pd.Timestamp(scope["start"]), pd.Timestamp(scope["end"]) + pd.Timedelta(days=1)
    for name, frame in sorted(raw.items()):
        frame = frame.copy()
        if key in frame.columns:
            frame[key] = frame[key].astype(str)
            frame = frame[frame[key].isin(scope["entities"])]
        for column in frame.columns.intersection(INSTANTS):
            frame[column] = instants(frame[column])
            frame = frame[(frame[column] >= start) & (frame[column] < end)]
        for column in frame.columns.intersection(YEARS):
            frame = frame[frame[column].between(start.year, end.year)]
        order = [c for c in (key, *INSTANTS, *YEARS) if c in frame.columns]
        tables[name] = (frame.sort_values(order) if order else frame).reset_index(drop=True)
    return tables


def instants(values: pd.Series) -> pd.Series:
    """Dates or timestamps as naive UTC `datetime64[ns]` (time-zone-aware values converted).

    Arrow-typed columns (as the repositories' Parquet files read) are cast by Arrow: pandas'
    `to_datetime` walks them value by value (~5 s for 2.4 M dates, 300x the cast).
    """
    if isinstance(values.dtype, pd.ArrowDtype) and pa.types.is_temporal(values.dtype.pyarrow_dtype):
        kind = values.dtype.pyarrow_dtype
        aware = pa.types.is_timestamp(kind) and kind.tz is not None
        cast = pa.chunked_array(values.array.__arrow_array__()).cast(
            pa.timestamp("ns", tz="UTC") if aware else pa.timestamp("ns"))
        naive = cast.cast(pa.timestamp("ns")) if aware else cast  # UTC wall time: Arrow stores UTC
        return pd.Series(naive.to_numpy(), index=values.index, name=values.name)
    if values.dtype == np.dtype("datetime64[ns]"):  # already naive UTC (`load_tables` made it so)
        return values.copy()
    return pd.to_datetime(values, utc=True).dt.tz_convert(None).astype("datetime64[ns]")


def _where(artifact: dict) -> tuple[str, str, str]:
    rows = artifact["rows"]
    return rows.get("table", "timeseries"), rows.get("time", "date"), rows["column"]


def _times(frame: pd.DataFrame, time: str) -> pd.Series:
    if time in YEARS:  # 1 January of each year
        years = frame[time].astype(int).to_numpy() - 1970
        return pd.Series(years.astype("datetime64[Y]").astype("datetime64[ns]"), index=frame.index, name=time)
    return instants(frame[time])


def required_rows(tables: dict[str, pd.DataFrame], scope: dict, artifact: dict) -> pd.DataFrame:
    """The key columns of every row the artifact must hold (the prompt's `rows` rule)."""
    key, rows = scope["entity_key"], artifact["rows"]
    if rows["kind"] == "entities":
        return pd.DataFrame({key: sorted(scope["entities"])})
    name, time, column = _where(artifact)
    series = tables[name]
    if rows["kind"] == "holdout":
        times = _times(series, time)
        test = (times >= pd.Timestamp(rows["from"])) & (times < pd.Timestamp(rows["to"]) + pd.Timedelta(days=1))
    elif rows["kind"] == "held_out_entities":
        test = series[key].isin(rows["entities"])
    else:
        test = series[column].isna()
    return series.loc[test, [key, time]].reset_index(drop=True)


def _fill(required: pd.DataFrame, values: np.ndarray, artifact: dict) -> pd.DataFrame:
    out = required.copy()
    for column, dtype in artifact["columns"].items():
        out[column] = values.astype(int) if dtype == "int" else values.astype(float)
    return out


def _public(tables: dict, artifact: dict) -> tuple[pd.DataFrame, str, str]:
    name, time, target = _where(artifact)
    series = tables[name]
    return series[series[target].notna()], time, target


def _entities(public: pd.DataFrame, target: str, required: pd.DataFrame, key: str | None) -> tuple:
    """Entity codes of the public and the required rows, each code's public rows, and its mean target.

    Codes number public entities in key order (all 0 without a `key`); -1 (mean NaN): no public rows.
    """
    codes, entities = pd.factorize(public[key], sort=True) if key else (np.zeros(len(public), dtype=np.intp), [0])
    wanted = pd.Index(entities).get_indexer(required[key]) if key else np.zeros(len(required), dtype=np.intp)
    owned, values = pd.Series(codes).groupby(codes).indices, public[target].to_numpy(dtype=float)
    return codes, wanted, owned, np.array([*(values[rows].sum() / len(rows) for rows in owned.values()), np.nan])
