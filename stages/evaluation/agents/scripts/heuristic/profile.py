"""Profile the staged files: the time series, the static attributes, what to predict from what.

Every Parquet file of `data/` is read and cut to the scope's entities and period. A table with the
entity key and a time column (datetime dtype, or a column named like a date) is a time series; a
table with one row per entity is the entities table. The target is the column the artifact block
says is owed (its `rows.column`); drivers are the other numeric time-varying columns; attributes
are the numeric static columns. Missingness is counted per time-series column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

TIME_NAMES = ("date", "time", "timestamp", "datetime", "day")


@dataclass(frozen=True)
class Profile:
    """What the staged data hold, as the methods need it."""

    key: str
    time: str | None
    series: pd.DataFrame | None  # entity key + time + numeric columns, sorted
    entities: pd.DataFrame | None  # one row per scoped entity, indexed by the key
    target: str | None
    drivers: list[str] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)
    missing: dict[str, float] = field(default_factory=dict)

    def entity_ids(self) -> list[str]:
        """The scoped entities that have data, sorted."""
        if self.series is not None:
            return sorted(self.series[self.key].unique())
        return sorted(self.entities.index) if self.entities is not None else []


def time_column(frame: pd.DataFrame) -> str | None:
    """The time column of a table: a datetime dtype first, else a column named like a date."""
    for column in frame.columns:
        if pd.api.types.is_datetime64_any_dtype(frame[column]):
            return column
    return next((c for c in frame.columns if c.lower() in TIME_NAMES), None)


def read_tables(data_dir: Path) -> dict[str, pd.DataFrame]:
    """Every Parquet table of `data/` (a hive-partitioned folder counts as one table)."""
    tables = {}
    for path in sorted(data_dir.iterdir()):
        if path.suffix == ".parquet" or (path.is_dir() and any(path.rglob("*.parquet"))):
            tables[path.stem] = pd.read_parquet(path)
    return tables


def scope_table(frame: pd.DataFrame, scope: dict) -> pd.DataFrame:
    """Rows of the scope's entities (keys as text) and, for a time series, its period."""
    key = scope["entity_key"]
    frame = frame.copy()
    frame[key] = frame[key].astype(str)
    frame = frame[frame[key].isin([str(e) for e in scope["entities"]])]
    time = time_column(frame)
    if time is not None:
        frame[time] = pd.to_datetime(frame[time]).dt.tz_localize(None).astype("datetime64[ns]")
        frame = frame[frame[time].between(pd.Timestamp(scope["start"]), pd.Timestamp(scope["end"]))]
        frame = frame.sort_values([key, time], kind="stable")
    return frame.reset_index(drop=True)


def numeric_columns(frame: pd.DataFrame, exclude: tuple[str, ...]) -> list[str]:
    """Numeric, non-boolean columns not in `exclude`, in table order."""
    return [c for c in frame.columns if c not in exclude and pd.api.types.is_numeric_dtype(frame[c])
            and not pd.api.types.is_bool_dtype(frame[c])]


def profile_tables(tables: dict[str, pd.DataFrame], scope: dict, target: str | None) -> Profile:
    """Profile scoped tables: the time series, the entities table, target and drivers."""
    key = scope["entity_key"]
    series = entities = time = None
    for name in sorted(tables):
        frame = tables[name]
        if key not in frame.columns:
            continue
        frame = scope_table(frame, scope)
        found = time_column(frame)
        if found is not None and series is None:
            series, time = frame, found
        elif found is None and entities is None and not frame[key].duplicated().any():
            entities = frame.set_index(key).sort_index()
    drivers, missing = [], {}
    if series is not None:
        numeric = numeric_columns(series, (key, time))
        series = series[[key, time, *numeric]].astype({c: float for c in numeric})
        drivers = [c for c in numeric if c != target and series[c].notna().any()]
        missing = {c: round(float(series[c].isna().mean()), 6) for c in numeric}
    attributes = numeric_columns(entities, ()) if entities is not None else []
    return Profile(key, time, series, entities, target, drivers, attributes, missing)


def read_profile(data_dir: Path, scope: dict, target: str | None) -> Profile:
    """Read and profile the staged files of a workspace."""
    return profile_tables(read_tables(data_dir), scope, target)


def wide(profile: Profile, column: str) -> pd.DataFrame:
    """One column of the time series as a days x entities frame (entities sorted)."""
    frame = profile.series.pivot(index=profile.time, columns=profile.key, values=column)
    return frame.sort_index().sort_index(axis=1).astype(float)


def entity_frames(profile: Profile) -> dict[str, pd.DataFrame]:
    """Per entity, its time-series rows in time order (index reset)."""
    return {str(e): rows.reset_index(drop=True)
            for e, rows in profile.series.groupby(profile.key, sort=True)}


def pick_driver(profile: Profile, words: tuple[str, ...]) -> str | None:
    """The first driver whose name starts with one of `words` (e.g. a precipitation column)."""
    return next((c for w in words for c in profile.drivers if c.lower().startswith(w)), None)
