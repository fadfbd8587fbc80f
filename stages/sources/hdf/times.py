"""Time coordinates of gridded files: UTC instants on real calendars, the model's own dates on the others.

xarray decodes CF times (to cftime dates where NumPy cannot hold them). On a real calendar,
`standard` / `gregorian`, `proleptic_gregorian` or `julian` (converted to proleptic Gregorian), a
time is an instant and becomes a UTC timestamp: the `grid` table. Every other calendar is a
model's: `noleap` / `365_day`, `all_leap` / `366_day`, `360_day` (cftime's names: `noleap`,
`all_leap`, `360_day`), ... Its dates are kept as the model counts them, as ISO 8601 labels
(`2000-02-30T00:00:00`, fractional seconds only when present) beside the calendar's name: the
`grid_model_calendar` table. No Gregorian date is made up for 30 February. A `noleap` date would
exist in Gregorian, but it is kept on its calendar too: mapped onto Gregorian days, a noleap daily
series shows a gap on 29 February of every leap year that the model never had, and day counts
across February (lags, differences, day of year) stop matching the model's. Labels have four-digit
years (0-9999; others are an error), so they sort as the dates do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cftime
import numpy as np
import pandas as pd
import xarray as xr

from stages.tables import RawFormatError

REAL_CALENDARS = frozenset({"julian", "standard", "gregorian"})  # converted, not relabelled
GREGORIAN_CALENDARS = REAL_CALENDARS | {"proleptic_gregorian"}  # what a UTC timestamp can hold


@dataclass(frozen=True, eq=False)  # holds an index: compared by identity
class Times:
    """The times of a time coordinate, in file order."""

    labels: pd.Index  # UTC timestamps (DatetimeIndex), or ISO labels in `calendar`
    calendar: str | None  # None: a real calendar (labels are UTC timestamps); else the model's calendar


def is_cftime(values: np.ndarray) -> bool:
    """Whether the array holds cftime dates (xarray's decoding where NumPy datetimes cannot)."""
    return values.dtype == object and values.size > 0 and isinstance(values.flat[0], cftime.datetime)


def read_times(path: Path, dataset: xr.Dataset, dim: str) -> Times:
    """The times of dimension `dim`: checked for missing and duplicated values, not sorted."""
    variable = dataset.variables.get(dim)
    values = variable.values if variable is not None else np.array([])
    if values.dtype.kind == "M":
        return Times(_checked(path, dim, pd.DatetimeIndex(values)).as_unit("us").tz_localize("UTC"), None)
    if not is_cftime(values):
        units = None if variable is None else variable.attrs.get("units", variable.encoding.get("units"))
        problem = ("has no coordinate variable" if variable is None else "has no units attribute"
                   if units is None else f"has units {units!r}, not CF 'UNIT since DATE'")
        raise RawFormatError(path, None, f"/{dim}: time coordinate {problem}")
    calendar = values.flat[0].calendar
    if calendar in GREGORIAN_CALENDARS:
        stamps = pd.DatetimeIndex([_gregorian(path, dim, value) for value in values])
        return Times(_checked(path, dim, stamps).as_unit("us").tz_localize("UTC"), None)
    labels = pd.Index([_label(path, dim, value) for value in values], dtype=object)
    return Times(_checked(path, dim, labels), calendar)


def _checked(path: Path, dim: str, labels: pd.Index) -> pd.Index:
    if labels.isna().any():
        raise RawFormatError(path, None, f"/{dim}: missing time value at index {np.argmax(labels.isna())}")
    duplicated = labels.duplicated()
    if duplicated.any():
        index = int(np.argmax(duplicated))
        first = int(np.argmax(labels == labels[index]))
        raise RawFormatError(path, None, f"/{dim}: duplicated time {labels[index]} at index {index} "
                             f"(first at index {first})")
    return labels


def _gregorian(path: Path, dim: str, value: cftime.datetime) -> pd.Timestamp:
    if value.calendar in REAL_CALENDARS:
        value = value.change_calendar("proleptic_gregorian")
    try:
        return pd.Timestamp(value.year, value.month, value.day, value.hour, value.minute,
                            value.second, value.microsecond)
    except ValueError as error:
        raise RawFormatError(path, None, f"/{dim}: date {value} of calendar {value.calendar!r} has no "
                             "Gregorian equivalent") from error


def _label(path: Path, dim: str, value: object) -> str | None:
    """`value` as an ISO 8601 label of its own calendar; None for a missing time."""
    if not isinstance(value, cftime.datetime):
        return None
    if not 0 <= value.year <= 9999:
        raise RawFormatError(path, None, f"/{dim}: date {value} of calendar {value.calendar!r} has a year "
                             "outside 0-9999")
    fraction = f".{value.microsecond:06d}" if value.microsecond else ""
    return (f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:"
            f"{value.second:02d}{fraction}")
