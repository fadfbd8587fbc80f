"""One FLUXNET-CH4 file -> validated per-site series; per-site series -> tidy stacked frames.

Checks beyond the csv layer: timestamps inside the years the file name names, unique timestamps,
sub-daily starts on the 30/60-minute grid with `TIMESTAMP_END = TIMESTAMP_START + step`, `_QC`
flags in {0, 1, 2, 3}, and no -9999 in ANN gap-filled (`_F_ANNOPTLM`) columns, which the product
documents as never missing. Unsorted rows are accepted and sorted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from stages.sources import fluxnet_ch4_columns as names
from stages.sources.fluxnet_ch4_csv import (
    SENTINEL,
    RawCsv,
    first_duplicate,
    parse_dates,
    parse_minutes,
    read_raw_csv,
    row_error,
)
from stages.sources.fluxnet_ch4_files import AMERIFLUX_BASE, METADATA_UNITS, DataFile
from stages.tables import RawFormatError

DATE_DTYPE = pd.ArrowDtype(pa.date32())
STEPS_MIN = {30: "half-hour", 60: "hour"}


@dataclass(frozen=True)
class SiteSeries:
    """A site's rows: time columns, renamed variable columns and their units."""

    times: dict[str, np.ndarray]  # "date" (datetime64[D]) or "timestamp_start"/"_end" (datetime64[m])
    columns: dict[str, np.ndarray | pd.api.extensions.ExtensionArray]
    units: dict[str, str]
    step_min: int | None = None
    utc: bool = False


def read_daily_file(found: DataFile, unknown_columns: str) -> SiteSeries:
    """Read and check one `_DD_` file."""
    raw = read_raw_csv(found.path, ("TIMESTAMP",))
    dates = parse_dates(raw, "TIMESTAMP")
    _check_years(raw, dates, found.years, "TIMESTAMP")
    duplicate = first_duplicate(raw, dates, "TIMESTAMP")
    if duplicate is not None:
        raise duplicate
    columns, units = _variables(raw, 1, unknown_columns)
    return _sorted({"date": dates}, columns, units, None, utc=False)


def read_subdaily_file(found: DataFile, utc_offset_h: float | None, unknown_columns: str) -> SiteSeries:
    """Read and check one `_HH_` or AmeriFlux BASE file; times shifted to UTC if an offset is given."""
    raw = read_raw_csv(found.path, ("TIMESTAMP_START", "TIMESTAMP_END"))
    start, end = parse_minutes(raw, "TIMESTAMP_START"), parse_minutes(raw, "TIMESTAMP_END")
    step = _step(raw, found, start, end)
    off_grid = (start - start.astype("datetime64[D]")).astype(np.int64) % step != 0
    if off_grid.any():
        row = int(np.argmax(off_grid))
        stamp = raw.values["TIMESTAMP_START"][row]
        raise row_error(raw, row, f"TIMESTAMP_START {stamp} is not on the {STEPS_MIN[step]} grid")
    wrong_end = (end - start).astype(np.int64) != step
    if wrong_end.any():
        row = int(np.argmax(wrong_end))
        stamp = raw.values["TIMESTAMP_END"][row]
        raise row_error(raw, row, f"TIMESTAMP_END {stamp} is not TIMESTAMP_START + {step} min")
    _check_years(raw, start.astype("datetime64[D]"), found.years, "TIMESTAMP_START")
    duplicate = first_duplicate(raw, start, "TIMESTAMP_START")
    if duplicate is not None:
        raise duplicate
    columns, units = _variables(raw, 2, unknown_columns)
    if utc_offset_h is not None:
        shift = np.timedelta64(int(round(utc_offset_h * 60)), "m")
        start, end = start - shift, end - shift
    times = {"timestamp_start": start, "timestamp_end": end}
    return _sorted(times, columns, units, step, utc=utc_offset_h is not None)


def to_frame(site: SiteSeries, time_names: tuple[str, ...]) -> pd.DataFrame:
    """One site's series as a DataFrame: time columns first, then the variables."""
    data = {name: _time_array(site.times[name], site.utc) for name in time_names}
    return pd.DataFrame(data | dict(site.columns))


def stack(sites: dict[str, SiteSeries], time_names: tuple[str, ...]) -> tuple[pd.DataFrame, dict[str, str]]:
    """Stack per-site series (sites sorted) behind `site_id`; returns the frame and column units.

    Consumes the series' variable arrays (each is dropped once copied) to bound peak memory.
    A site without some column gets nulls there.
    """
    order = sorted(sites)
    units: dict[str, str] = {}
    for site in order:
        units |= {c: u for c, u in sites[site].units.items() if c not in units}
    lengths = [len(sites[s].times[time_names[0]]) for s in order]
    utc = any(sites[s].utc for s in order)
    data: dict[str, object] = {"site_id": pd.array(np.repeat(np.array(order, dtype=object), lengths),
                                                   dtype="string")}
    for name in time_names:
        empty = np.array([], "datetime64[D]" if name == "date" else "datetime64[m]")
        data[name] = _time_array(np.concatenate([sites[s].times[name] for s in order] or [empty]), utc)
    for column in units:
        is_flag = any(isinstance(sites[s].columns.get(column), pd.api.extensions.ExtensionArray)
                      for s in order)
        parts = [sites[s].columns.pop(column, None) for s in order]
        parts = [np.full(n, np.nan) if p is None else p.to_numpy("float64", na_value=np.nan)
                 if is_flag else p for p, n in zip(parts, lengths, strict=True)]
        values = np.concatenate(parts) if parts else np.array([], "float64")
        data[column] = _flags(values) if is_flag else values
    return pd.DataFrame(data, copy=False), units


def sites_frame(rows: list[dict], metadata: pd.DataFrame | None, utc: bool) -> pd.DataFrame:
    """The `sites` rows with typed columns, joined with the site metadata (ids already spelled as there)."""
    def column(name: str) -> list:
        return [row[name] for row in rows]

    def times(name: str, unit: str) -> np.ndarray:
        return np.array([np.datetime64("NaT") if v is None else v for v in column(name)], unit)

    frame = pd.DataFrame({
        "site_id": pd.array(column("site_id"), dtype="string"),
        "product": pd.array(column("product"), dtype="string"),
        "product_version": pd.array(column("product_version"), dtype="string"),
        "first_date": _time_array(times("first_date", "datetime64[D]"), False),
        "last_date": _time_array(times("last_date", "datetime64[D]"), False),
        "n_days": pd.array(column("n_days"), dtype="Int64"),
        "subdaily_step_min": pd.array(column("subdaily_step_min"), dtype="Int64"),
        "n_subdaily": pd.array(column("n_subdaily"), dtype="Int64"),
        "first_timestamp_start": _time_array(times("first_timestamp_start", "datetime64[m]"), utc),
        "last_timestamp_end": _time_array(times("last_timestamp_end", "datetime64[m]"), utc),
        "utc_offset_h": np.array([np.nan if v is None else v for v in column("utc_offset_h")], "float64"),
    })
    static = [c for c in METADATA_UNITS if c != "utc_offset_h"]
    if metadata is None:
        metadata = pd.DataFrame({"site_id": pd.array([], dtype="string")} | {
            c: pd.array([], dtype="float64" if METADATA_UNITS[c] == "deg" else "string") for c in static})
    frame = frame.merge(metadata[["site_id", *static]], on="site_id", how="left", validate="one_to_one")
    return frame.sort_values("site_id", ignore_index=True)


def _flags(values: np.ndarray) -> pd.arrays.IntegerArray:
    missing = np.isnan(values)
    return pd.arrays.IntegerArray(np.where(missing, 0, values).astype(np.int8), missing)


def _time_array(values: np.ndarray, utc: bool) -> object:
    if values.dtype == np.dtype("datetime64[D]"):
        return pd.arrays.ArrowExtensionArray(pa.array(values, type=pa.date32()))
    stamps = pd.Series(values.astype("datetime64[ns]"))
    return (stamps.dt.tz_localize("UTC") if utc else stamps).array


def _sorted(times: dict[str, np.ndarray], columns: dict, units: dict[str, str], step: int | None,
            utc: bool) -> SiteSeries:
    key = next(iter(times.values()))
    if len(key) > 1 and not (key[1:] > key[:-1]).all():
        order = np.argsort(key, kind="stable")
        times = {n: v[order] for n, v in times.items()}
        columns = {n: v[order] for n, v in columns.items()}
    return SiteSeries(times, columns, units, step, utc)


def _step(raw: RawCsv, found: DataFile, start: np.ndarray, end: np.ndarray) -> int:
    if found.kind == "HR":
        return 60
    if found.product == AMERIFLUX_BASE:
        return 30
    minutes = (end - start).astype(np.int64)
    step = int(np.median(minutes))
    if step not in STEPS_MIN:
        row = int(np.argmax(minutes == step))
        raise row_error(raw, row, f"TIMESTAMP_END - TIMESTAMP_START is {step} min in most rows; "
                                  "expected 30 (half-hourly) or 60 (hourly)")
    return step


def _check_years(raw: RawCsv, days: np.ndarray, years: tuple[int, int] | None, column: str) -> None:
    if years is None:
        return
    year = days.astype("datetime64[Y]").astype(np.int64) + 1970
    outside = (year < years[0]) | (year > years[1])
    if outside.any():
        row = int(np.argmax(outside))
        raise row_error(raw, row, f"{column} {raw.values[column][row]} is outside the years "
                                  f"{years[0]}-{years[1]} named in the file name")


def _variables(raw: RawCsv, n_time: int, unknown_columns: str) -> tuple[dict, dict[str, str]]:
    """Rename, null the -9999 sentinel, check flags and ANN columns; returns columns and units."""
    columns: dict[str, object] = {}
    units: dict[str, str] = {}
    sources: dict[str, str] = {}
    for name in raw.names[n_time:]:
        if not names.is_variable_name(name):
            raise RawFormatError(raw.path, raw.header_line, f"column name {name!r} is not a FLUXNET"
                                 " variable name (upper case letters, digits and underscores)")
        variable = names.describe(name)
        if variable is None and unknown_columns == "raise":
            raise RawFormatError(raw.path, raw.header_line, f"unknown variable {name!r} (its base name"
                                 " is not in the FLUXNET-CH4/AmeriFlux vocabulary)")
        variable = variable or names.describe_unknown(name)
        if variable.column in sources:
            raise RawFormatError(raw.path, raw.header_line, f"columns {sources[variable.column]!r} and"
                                 f" {name!r} both become {variable.column!r}")
        sources[variable.column] = name
        values = raw.values[name]
        missing = values == SENTINEL
        if variable.never_missing and missing.any():
            row = int(np.argmax(missing))
            raise row_error(raw, row, f"unexpected sentinel -9999 in column {name} (ANN gap-filled"
                                      " values are never missing)")
        if variable.is_flag:
            bad = ~missing & ~np.isin(values, sorted(names.QC_FLAGS))
            if bad.any():
                row = int(np.argmax(bad))
                raise row_error(raw, row, f"QC flag {values[row]:g} in column {name} outside {{0, 1, 2, 3}}")
            columns[variable.column] = _flags(np.where(missing, np.nan, values))
        else:
            columns[variable.column] = np.where(missing, np.nan, values)
        units[variable.column] = variable.unit
    return columns, units
