"""Profile the staged files: the time series, the static attributes, what to predict from what.

Every Parquet file of `data/` is read and cut to the scope's entities and period. The time series
is the table the artifact block names (`rows.table`, time column `rows.time`), else the first table
with the entity key and a time column (datetime dtype, or a column named like a date); a table with
one row per entity is the entities table. A time column of whole years becomes 1 January of the
year. The target is the column the artifact block says is owed (its `rows.column`); drivers are the
other numeric time-varying columns; attributes are the numeric static columns. An annual series
also gets, as drivers, the yearly and growing-season (April to September) means of every numeric
column of the daily tables of the same entities, and the year itself (a trend). Missingness is
counted per time-series column. Files in their own formats add per-entity attributes
(`heuristic.native`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
from heuristic.native import native_attributes

TIME_NAMES = ("date", "time", "timestamp", "datetime", "day")
YEAR_NAMES = ("year", "harvest_year")
GROWING_MONTHS = (4, 9)


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


def scope_table(frame: pd.DataFrame, scope: dict, time: str | None = None) -> pd.DataFrame:
    """Rows of the scope's entities (keys as text) and, for a time series, its period."""
    key = scope["entity_key"]
    frame = frame.copy()
    frame[key] = frame[key].astype(str)
    frame = frame[frame[key].isin([str(e) for e in scope["entities"]])]
    time = time or time_column(frame)
    if time is not None and time in frame.columns:
        if time in YEAR_NAMES and not pd.api.types.is_datetime64_any_dtype(frame[time]):
            frame[time] = pd.to_datetime(frame[time].astype(int).astype(str) + "-01-01")
        frame[time] = pd.to_datetime(frame[time], utc=True).dt.tz_convert(None).astype("datetime64[ns]")
        end = pd.Timestamp(scope["end"]) + pd.Timedelta(days=1)
        frame = frame[(frame[time] >= pd.Timestamp(scope["start"])) & (frame[time] < end)]
        frame = frame.sort_values([key, time], kind="stable")
    return frame.reset_index(drop=True)


def annual_drivers(tables: dict[str, pd.DataFrame], scope: dict, skip: str) -> pd.DataFrame | None:
    """Per entity and year, the yearly and growing-season means of the daily tables' numeric columns."""
    key, parts = scope["entity_key"], []
    for name in sorted(tables):
        frame = tables[name]
        if name == skip or key not in frame.columns:
            continue
        frame = scope_table(frame, scope)
        time = time_column(frame)
        if time is None or frame[time].diff().dt.days.median() != 1:
            continue
        numeric = numeric_columns(frame, (key, time))
        year = frame[time].dt.year.rename("_year")
        season = frame[time].dt.month.between(*GROWING_MONTHS)
        yearly = frame.groupby([frame[key], year])[numeric].mean().add_suffix("_year_mean")
        grow = frame[season].groupby([frame[key], year])[numeric].mean().add_suffix("_season_mean")
        parts.append(yearly.join(grow, how="outer").add_prefix(f"{name}_"))
    if not parts:
        return None
    return pd.concat(parts, axis=1).reset_index()


def numeric_columns(frame: pd.DataFrame, exclude: tuple[str, ...]) -> list[str]:
    """Numeric, non-boolean columns not in `exclude`, in table order."""
    return [c for c in frame.columns if c not in exclude and pd.api.types.is_numeric_dtype(frame[c])
            and not pd.api.types.is_bool_dtype(frame[c])]


def profile_tables(tables: dict[str, pd.DataFrame], scope: dict, target: str | None,
                   where: dict | None = None) -> Profile:
    """Profile scoped tables: the time series, the entities table, target and drivers."""
    key = scope["entity_key"]
    series = entities = time = None
    named = (where or {}).get("table")
    if named in tables and key in tables[named].columns and where.get("time") in tables[named].columns:
        series, time = scope_table(tables[named], scope, where["time"]), where["time"]
    for name in sorted(tables):
        frame = tables[name]
        if key not in frame.columns or name == named:
            continue
        frame = scope_table(frame, scope)
        found = time_column(frame)
        if found is not None and series is None:
            series, time = frame, found
        elif found is None and entities is None and not frame[key].duplicated().any():
            entities = frame.set_index(key).sort_index()
    if series is not None and len(series) > 1 and series[time].diff().dt.days.median() >= 300:
        extra = annual_drivers(tables, scope, named or "")
        series = series.assign(_year=series[time].dt.year, trend_year=series[time].dt.year.astype(float))
        if extra is not None:
            series = series.merge(extra, on=[key, "_year"], how="left")
        series = series.drop(columns="_year")
    drivers, missing = [], {}
    if series is not None:
        numeric = numeric_columns(series, (key, time))
        series = series[[key, time, *numeric]].astype({c: float for c in numeric})
        drivers = [c for c in numeric if c != target and series[c].notna().any()]
        missing = {c: round(float(series[c].isna().mean()), 6) for c in numeric}
    attributes = numeric_columns(entities, ()) if entities is not None else []
    return Profile(key, time, series, entities, target, drivers, attributes, missing)


def read_profile(data_dir: Path, scope: dict, target: str | None, where: dict | None = None) -> Profile:
    """Read and profile the staged files of a workspace (`where`: the artifact block's rows).

    Files in their own formats (a NetCDF grid, GeoTIFF layers) add per-entity attributes
    (`heuristic.native`).
    """
    profile = profile_tables(read_tables(data_dir), scope, target, where)
    if profile.entities is None:
        return profile
    extra = native_attributes(data_dir, profile.entities)
    if extra.empty or not len(extra.columns):
        return profile
    entities = profile.entities.join(extra, how="left")
    return replace(profile, entities=entities, attributes=numeric_columns(entities, ()))


def owed_mask(profile: Profile, rows: dict) -> pd.Series:
    """The time-series rows the artifact owes, by the artifact block's `rows` rule."""
    series = profile.series
    if rows["kind"] == "holdout":
        end = pd.Timestamp(rows["to"]) + pd.Timedelta(days=1)
        return (series[profile.time] >= pd.Timestamp(rows["from"])) & (series[profile.time] < end)
    if rows["kind"] == "held_out_entities":
        return series[profile.key].isin([str(e) for e in rows["entities"]])
    return series[profile.target].isna()


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
