"""One FLUXNET-CH4 file -> a validated per-site series (Arrow columns, sentinels still in place).

Checks beyond the csv layer: timestamps inside the years the file name names, unique timestamps,
sub-daily starts on the 30/60-minute grid with `TIMESTAMP_END = TIMESTAMP_START + step`, `_QC`
flags in {0, 1, 2, 3}, and no -9999 in ANN gap-filled (`_F_ANNOPTLM`) columns, which the product
documents as never missing. Unsorted rows are accepted and sorted. Every check is vectorised over
the whole file; the first failing row is named by its physical line. The -9999 -> null step
happens when `fluxnet_ch4_stack` copies the columns into the stacked table; non-finite tokens are
NaN already (see `fluxnet_ch4_csv`) and pass every check as missing values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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
    read_header,
    read_raw_csv,
    row_error,
)
from stages.sources.fluxnet_ch4_files import AMERIFLUX_BASE, METADATA_UNITS, DataFile
from stages.tables import RawFormatError

STEPS_MIN = {30: "half-hour", 60: "hour"}
SUBDAILY_TIMES = ("TIMESTAMP_START", "TIMESTAMP_END")


@dataclass(frozen=True)
class SiteSeries:
    """A site's validated rows in time order: time columns, renamed variable columns and their units.

    `columns` hold the raw float64 values (-9999 where missing); the stacker consumes (empties) them.
    """

    times: dict[str, np.ndarray]  # "date" (datetime64[D]) or "timestamp_start"/"_end" (datetime64[m])
    columns: dict[str, pa.ChunkedArray]
    units: dict[str, str]
    flags: frozenset[str] = frozenset()  # the `_QC` flag columns (stored as Int8)
    step_min: int | None = None
    utc: bool = False
    nonfinite: dict[str, int] = field(default_factory=dict)  # raw column -> non-finite values set to null

    @property
    def rows(self) -> int:
        """Number of rows."""
        return len(next(iter(self.times.values())))


def read_daily_file(found: DataFile, unknown_columns: str) -> SiteSeries:
    """Read and check one `_DD_` file."""
    raw = read_raw_csv(found.path, ("TIMESTAMP",))
    dates = parse_dates(raw, "TIMESTAMP")
    _check_years(raw, raw.stamps["TIMESTAMP"] // 10**4, found.years, "TIMESTAMP")
    duplicate = first_duplicate(raw, dates, "TIMESTAMP")
    if duplicate is not None:
        raise duplicate
    columns, units, flags = _variables(raw, unknown_columns)
    return _sorted({"date": dates}, columns, units, flags, None, utc=False, nonfinite=raw.nonfinite)


def read_subdaily_file(found: DataFile, utc_offset_h: float | None, unknown_columns: str) -> SiteSeries:
    """Read and check one `_HH_` or AmeriFlux BASE file; times shifted to UTC if an offset is given."""
    raw = read_raw_csv(found.path, SUBDAILY_TIMES)
    start, end = parse_minutes(raw, "TIMESTAMP_START"), parse_minutes(raw, "TIMESTAMP_END")
    minutes = (end - start).astype(np.int64)
    step = _step(raw, found, minutes)
    off_grid = start.view(np.int64) % step != 0  # a day is a whole number of steps
    if off_grid.any():
        row = int(np.argmax(off_grid))
        stamp = raw.stamps["TIMESTAMP_START"][row]
        raise row_error(raw, row, f"TIMESTAMP_START {stamp} is not on the {STEPS_MIN[step]} grid")
    wrong_end = minutes != step
    if wrong_end.any():
        row = int(np.argmax(wrong_end))
        stamp = raw.stamps["TIMESTAMP_END"][row]
        raise row_error(raw, row, f"TIMESTAMP_END {stamp} is not TIMESTAMP_START + {step} min")
    _check_years(raw, raw.stamps["TIMESTAMP_START"] // 10**8, found.years, "TIMESTAMP_START")
    duplicate = first_duplicate(raw, start, "TIMESTAMP_START")
    if duplicate is not None:
        raise duplicate
    columns, units, flags = _variables(raw, unknown_columns)
    if utc_offset_h is not None:
        shift = np.timedelta64(int(round(utc_offset_h * 60)), "m")
        start, end = start - shift, end - shift
    times = {"timestamp_start": start, "timestamp_end": end}
    return _sorted(times, columns, units, flags, step, utc=utc_offset_h is not None, nonfinite=raw.nonfinite)


def subdaily_columns(found: DataFile, unknown_columns: str) -> dict[str, tuple[str, bool]]:
    """The output columns a sub-daily file holds if it passes, read from its header alone.

    Column -> (unit, is a flag), in file order. A bad header raises its RawFormatError.
    """
    header_line, header = read_header(found.path, SUBDAILY_TIMES)
    raw_names = header.split(",")[len(SUBDAILY_TIMES):]
    variables = _describe(found.path, header_line, raw_names, unknown_columns)
    return {variable.column: (variable.unit, variable.is_flag) for variable in variables}


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
        "first_date": time_array(times("first_date", "datetime64[D]"), False),
        "last_date": time_array(times("last_date", "datetime64[D]"), False),
        "n_days": pd.array(column("n_days"), dtype="Int64"),
        "subdaily_step_min": pd.array(column("subdaily_step_min"), dtype="Int64"),
        "n_subdaily": pd.array(column("n_subdaily"), dtype="Int64"),
        "first_timestamp_start": time_array(times("first_timestamp_start", "datetime64[m]"), utc),
        "last_timestamp_end": time_array(times("last_timestamp_end", "datetime64[m]"), utc),
        "utc_offset_h": np.array([np.nan if v is None else v for v in column("utc_offset_h")], "float64"),
    })
    static = [c for c in METADATA_UNITS if c != "utc_offset_h"]
    if metadata is None:
        metadata = pd.DataFrame({"site_id": pd.array([], dtype="string")} | {
            c: pd.array([], dtype="float64" if METADATA_UNITS[c] == "deg" else "string") for c in static})
    frame = frame.merge(metadata[["site_id", *static]], on="site_id", how="left", validate="one_to_one")
    return frame.sort_values("site_id", ignore_index=True)


def time_array(values: np.ndarray, utc: bool) -> object:
    """Dates as Arrow date32; datetime64 times as pandas datetime64[ns] (tz-aware UTC if `utc`)."""
    if values.dtype == np.dtype("datetime64[D]"):
        return pd.arrays.ArrowExtensionArray(pa.array(values, type=pa.date32()))
    stamps = values.astype("datetime64[ns]", copy=False)
    return pd.array(stamps, dtype=pd.DatetimeTZDtype("ns", "UTC") if utc else None, copy=False)


def _sorted(times: dict[str, np.ndarray], columns: dict[str, pa.ChunkedArray], units: dict[str, str],
            flags: frozenset[str], step: int | None, utc: bool, nonfinite: dict[str, int]) -> SiteSeries:
    key = next(iter(times.values()))
    if len(key) > 1 and not (key[1:] > key[:-1]).all():
        order = np.argsort(key, kind="stable")
        times = {n: v[order] for n, v in times.items()}
        columns = {n: v.take(pa.array(order)) for n, v in columns.items()}
    return SiteSeries(times, columns, units, flags, step, utc, nonfinite)


def _step(raw: RawCsv, found: DataFile, minutes: np.ndarray) -> int:
    if found.kind == "HR":
        return 60
    if found.product == AMERIFLUX_BASE:
        return 30
    step = int(np.median(minutes))
    if step not in STEPS_MIN:
        row = int(np.argmax(minutes == step))
        raise row_error(raw, row, f"TIMESTAMP_END - TIMESTAMP_START is {step} min in most rows; "
                                  "expected 30 (half-hourly) or 60 (hourly)")
    return step


def _check_years(raw: RawCsv, year: np.ndarray, years: tuple[int, int] | None, column: str) -> None:
    if years is None:
        return
    outside = (year < years[0]) | (year > years[1])
    if outside.any():
        row = int(np.argmax(outside))
        raise row_error(raw, row, f"{column} {raw.stamps[column][row]} is outside the years "
                                  f"{years[0]}-{years[1]} named in the file name")


def _variables(raw: RawCsv, unknown_columns: str) -> tuple[dict, dict[str, str], frozenset[str]]:
    """Rename and check flags and ANN columns; returns the columns, their units and the flag columns."""
    variables = _describe(raw.path, raw.header_line, list(raw.columns), unknown_columns)
    for variable in variables:
        if variable.never_missing or variable.is_flag:
            _check_values(raw, variable.raw, raw.columns[variable.raw].to_numpy(), variable)
    columns = {variable.column: raw.columns[variable.raw] for variable in variables}
    units = {variable.column: variable.unit for variable in variables}
    return columns, units, frozenset(variable.column for variable in variables if variable.is_flag)


def _describe(path: Path, header_line: int, raw_names: list[str], unknown_columns: str) -> list[names.Variable]:
    """How each variable column of a header becomes an output column; header errors name the line."""
    variables: list[names.Variable] = []
    sources: dict[str, str] = {}
    for name in raw_names:
        if not names.is_variable_name(name):
            raise RawFormatError(path, header_line, f"column name {name!r} is not a FLUXNET"
                                 " variable name (upper case letters, digits and underscores)")
        variable = names.describe(name)
        if variable is None and unknown_columns == "raise":
            raise RawFormatError(path, header_line, f"unknown variable {name!r} (its base name"
                                 " is not in the FLUXNET-CH4/AmeriFlux vocabulary)")
        variable = variable or names.describe_unknown(name)
        if variable.column in sources:
            raise RawFormatError(path, header_line, f"columns {sources[variable.column]!r} and"
                                 f" {name!r} both become {variable.column!r}")
        sources[variable.column] = name
        variables.append(variable)
    return variables


def _check_values(raw: RawCsv, name: str, values: np.ndarray, variable: names.Variable) -> None:
    missing = values == SENTINEL
    if variable.never_missing and missing.any():
        row = int(np.argmax(missing))
        raise row_error(raw, row, f"unexpected sentinel -9999 in column {name} (ANN gap-filled"
                                  " values are never missing)")
    if variable.is_flag:  # NaN: a non-finite token, already counted and set to null
        bad = ~missing & ~np.isnan(values) & ~np.isin(values, sorted(names.QC_FLAGS))
        if bad.any():
            row = int(np.argmax(bad))
            raise row_error(raw, row, f"QC flag {values[row]:g} in column {name} outside {{0, 1, 2, 3}}")
