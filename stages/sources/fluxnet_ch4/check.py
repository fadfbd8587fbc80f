"""Step 3, check: the rules a parsed file must meet, each one vectorised over the whole file.

Timestamps: no -9999, `YYYYMMDD` / `YYYYMMDDHHMM` of real dates and times, inside the years the
file name names, unique. Sub-daily files: starts on the 30/60-minute grid and `TIMESTAMP_END =
TIMESTAMP_START + step`. Variables: names in the FLUXNET vocabulary (or kept as unknown),
`_QC` flags in {0, 1, 2, 3}, no -9999 in ANN gap-filled (`_F_ANNOPTLM`) columns, which the
product documents as never missing. Unsorted rows are accepted (`assemble` sorts them). A failing
check names the first failing row's physical line (`parse.row_error`); non-finite values are NaN
already and pass every check as missing values.
"""

from __future__ import annotations

import numpy as np

from stages.sources.fluxnet_ch4 import columns as names
from stages.sources.fluxnet_ch4.files import AMERIFLUX_BASE, DataFile
from stages.sources.fluxnet_ch4.parse import SENTINEL, Header, RawCsv, row_error
from stages.tables import RawFormatError, calendar_dates

STEPS_MIN = {30: "half-hour", 60: "hour"}


def daily_times(raw: RawCsv, found: DataFile) -> dict[str, np.ndarray]:
    """`date` (datetime64[D]) of a checked `_DD_` file."""
    stamps = raw.stamps["TIMESTAMP"]
    dates = _days(raw, "TIMESTAMP", 8).view("datetime64[D]")
    _check_years(raw, stamps // 10**4, found.years, "TIMESTAMP")
    _check_unique(raw, dates, "TIMESTAMP")
    return {"date": dates}


def subdaily_times(raw: RawCsv, found: DataFile) -> tuple[dict[str, np.ndarray], int]:
    """`timestamp_start` / `timestamp_end` (datetime64[m], local standard time) and the step in minutes."""
    start, end = _minutes(raw, "TIMESTAMP_START"), _minutes(raw, "TIMESTAMP_END")
    minutes = (end - start).astype(np.int64)
    step = _step(raw, found, minutes)
    _first_failure(raw, start.view(np.int64) % step != 0,  # a day is a whole number of steps
                   lambda stamp: f"TIMESTAMP_START {stamp} is not on the {STEPS_MIN[step]} grid", "TIMESTAMP_START")
    _first_failure(raw, minutes != step,
                   lambda stamp: f"TIMESTAMP_END {stamp} is not TIMESTAMP_START + {step} min", "TIMESTAMP_END")
    _check_years(raw, raw.stamps["TIMESTAMP_START"] // 10**8, found.years, "TIMESTAMP_START")
    _check_unique(raw, start, "TIMESTAMP_START")
    return {"timestamp_start": start, "timestamp_end": end}, step


def variables(path, header: Header, time_columns: tuple[str, ...], unknown_columns: str) -> list[names.Variable]:
    """How each variable column of a header becomes an output column; header errors name its line."""
    found: list[names.Variable] = []
    sources: dict[str, str] = {}
    for name in header.names[len(time_columns):]:
        if not names.is_variable_name(name):
            raise RawFormatError(path, header.line, f"column name {name!r} is not a FLUXNET variable name"
                                 " (upper case letters, digits and underscores)")
        variable = names.describe(name)
        if variable is None and unknown_columns == "raise":
            raise RawFormatError(path, header.line, f"unknown variable {name!r} (its base name is not in"
                                 " the FLUXNET-CH4/AmeriFlux vocabulary)")
        variable = variable or names.describe_unknown(name)
        if variable.column in sources:
            raise RawFormatError(path, header.line, f"columns {sources[variable.column]!r} and {name!r} both"
                                 f" become {variable.column!r}")
        sources[variable.column] = name
        found.append(variable)
    return found


def check_values(raw: RawCsv, found: list[names.Variable]) -> None:
    """ANN gap-filled columns hold no -9999; `_QC` flags are 0-3 or missing."""
    for variable in (v for v in found if v.never_missing or v.is_flag):
        values = raw.columns[variable.raw].to_numpy()
        missing = values == SENTINEL
        if variable.never_missing and missing.any():
            raise row_error(raw, int(np.argmax(missing)), f"unexpected sentinel -9999 in column {variable.raw}"
                            " (ANN gap-filled values are never missing)")
        if variable.is_flag:  # NaN: a non-finite token, already counted and set to null
            bad = ~missing & ~np.isnan(values) & ~np.isin(values, sorted(names.QC_FLAGS))
            if bad.any():
                row = int(np.argmax(bad))
                raise row_error(raw, row, f"QC flag {values[row]:g} in column {variable.raw} outside {{0, 1, 2, 3}}")


def _minutes(raw: RawCsv, column: str) -> np.ndarray:
    """`YYYYMMDDHHMM` integers -> datetime64[m]."""
    stamps = raw.stamps[column]
    days = _days(raw, column, 12)
    clock = stamps % 10000
    hours, mins = clock // 100, clock % 100
    _first_failure(raw, (hours > 23) | (mins > 59), lambda stamp: f"impossible time {stamp} in {column}", column)
    return (days * 1440 + hours * 60 + mins).view("datetime64[m]")


def _days(raw: RawCsv, column: str, digits: int) -> np.ndarray:
    """Days since 1970 of each stamp's date (int64), after the sentinel, width and date checks.

    Rows come in runs of one day, so the calendar is checked and converted once per run.
    """
    stamps = raw.stamps[column]
    _first_failure(raw, stamps == SENTINEL, lambda _: f"unexpected sentinel -9999 in {column}", column)
    layout = "YYYYMMDD" if digits == 8 else "YYYYMMDDHHMM"
    _first_failure(raw, (stamps < 10 ** (digits - 1)) | (stamps >= 10 ** digits),
                   lambda stamp: f"value {stamp} in {column} is not a {layout} timestamp", column)
    day_keys = stamps // 10 ** (digits - 8)
    starts = np.concatenate([[0], np.flatnonzero(day_keys[1:] != day_keys[:-1]) + 1])
    keys = day_keys[starts]
    dates, valid = calendar_dates(keys // 10000, keys // 100 % 100, keys % 100)
    if not valid.all():
        row = int(starts[np.argmin(valid)])
        raise row_error(raw, row, f"impossible date in {column} {stamps[row]}")
    return np.repeat(dates.astype(np.int64), np.diff(np.append(starts, len(stamps))))


def _step(raw: RawCsv, found: DataFile, minutes: np.ndarray) -> int:
    if found.kind == "HR":
        return 60
    if found.product == AMERIFLUX_BASE:
        return 30
    step = int(np.median(minutes))
    if step not in STEPS_MIN:
        raise row_error(raw, int(np.argmax(minutes == step)), f"TIMESTAMP_END - TIMESTAMP_START is {step} min in"
                        " most rows; expected 30 (half-hourly) or 60 (hourly)")
    return step


def _check_years(raw: RawCsv, year: np.ndarray, years: tuple[int, int] | None, column: str) -> None:
    if years is not None:
        _first_failure(raw, (year < years[0]) | (year > years[1]), lambda stamp: f"{column} {stamp} is outside"
                       f" the years {years[0]}-{years[1]} named in the file name", column)


def _check_unique(raw: RawCsv, stamps: np.ndarray, column: str) -> None:
    """The first repeated timestamp (in file order) names its line and the line of its first occurrence."""
    if len(stamps) < 2 or (stamps[1:] > stamps[:-1]).all():
        return
    order = np.argsort(stamps, kind="stable")
    repeated = np.flatnonzero(stamps[order][1:] == stamps[order][:-1])
    if len(repeated):
        row, first = min((int(order[i + 1]), int(order[i])) for i in repeated)
        line = row_error(raw, first, "").line
        raise row_error(raw, row, f"duplicated {column} {raw.stamps[column][row]} (first at line {line})")


def _first_failure(raw: RawCsv, failing: np.ndarray, problem, column: str) -> None:
    """Raise for the first failing row, `problem(raw stamp of that row)` naming what is wrong."""
    if failing.any():
        row = int(np.argmax(failing))
        raise row_error(raw, row, problem(raw.stamps[column][row]))
