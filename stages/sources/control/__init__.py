"""Control-set source adapter: synthetic series with known structure, as plain csv files.

Raw layout under ``raw_dir`` (written by `stages.synthesize.control`)::

    series.csv              series_id,family,region,a1,a2,a3,component,driver   (one row per series)
    <family>.csv            series_id,date,y,x1,x2,x3,x4,x5                     (one row per series-day)

`family` is one of mixture, noise, ar, linear and names the file that holds the series' days.
Every file is UTF-8 text, comma-separated, no quoting, one header row with exactly these columns
in this order; LF or CRLF line ends; empty lines are skipped; a byte-order mark before the header
is ignored. Dates are ``YYYY-MM-DD``. Values and attributes are decimal numbers; an empty value
cell is a missing observation (null), a non-finite token (nan, inf) is an error. `component` is
the hidden mixture component (a positive integer; mixture series only, empty otherwise) and
`driver` the hidden dominant driver of a linear series (x1..x5; linear series only). Other
``.csv`` files are errors; other files (the generator's ``_truth.json``, ``PROVENANCE.json``) are
ignored. Every error names the file, the line and the problem.

With ``on_error: quarantine`` a bad family file is left out and listed in the `quarantine` table;
a bad ``series.csv`` always stops the read (nothing can be checked without it).

The values are the benchmark's own synthetic controls; they stand in for no data product. The
families adapt standard models: Gaussian mixtures, white noise, the autoregressive processes of
Box and Jenkins (1970) and the linear regression model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from stages.tables import RawFormatError, Table, quarantine_table

# names the generator's file before it became stages/synthesize/control/; kept as it was because ingest
# writes it into the source manifest (stands_in_for)
CITATION = "none: synthetic control series of this benchmark (stages/synthesize/control.py), no data product"
LICENSE = "generated values, no third-party terms"
FAMILIES = ("mixture", "noise", "ar", "linear")
SERIES_COLUMNS = ("series_id", "family", "region", "a1", "a2", "a3", "component", "driver")
DAILY_COLUMNS = ("series_id", "date", "y", "x1", "x2", "x3", "x4", "x5")
VALUES = DAILY_COLUMNS[2:]
ATTRIBUTES = ("a1", "a2", "a3")
DRIVERS = ("x1", "x2", "x3", "x4", "x5")
DATE_DTYPE = pd.ArrowDtype(pa.date32())
SERIES_UNITS = {"family": "1", "region": "1", "a1": "1", "a2": "1", "a3": "1", "component": "1", "driver": "1"}
DAILY_UNITS = dict.fromkeys(VALUES, "1")
_SERIES_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class Params(BaseModel):
    """Parameters of `ingest@control`."""

    model_config = ConfigDict(extra="forbid")
    on_error: Literal["raise", "quarantine"] = "raise"


def read(raw_dir: Path, params: Params) -> Iterator[Table]:
    """Yield the `series`, `daily` and `quarantine` tables."""
    series = read_series(raw_dir / "series.csv")
    families = dict(zip(series["series_id"], series["family"], strict=True))
    errors: list[RawFormatError] = []
    frames = []
    for path in _family_files(raw_dir, params, errors):
        try:
            frames.append(read_family(path, families))
        except RawFormatError as error:
            if params.on_error == "raise":
                raise
            errors.append(error)
    daily = pd.concat(frames, ignore_index=True) if frames else _empty_daily()
    daily = daily.sort_values(["series_id", "date"], kind="stable", ignore_index=True)
    yield Table("series", series, ("series_id",), SERIES_UNITS)
    yield Table("daily", daily, ("series_id", "date"), DAILY_UNITS)
    yield quarantine_table(errors)


def read_series(path: Path) -> pd.DataFrame:
    """The series catalogue: one row per series with family, region, attributes and hidden labels."""
    lines = _lines(path, SERIES_COLUMNS)
    cells = _cells(path, lines, len(SERIES_COLUMNS))
    column = dict(zip(SERIES_COLUMNS, cells, strict=True))
    numbers = [line for line, _ in lines]
    _check_ids(path, numbers, column["series_id"])
    for row, family in enumerate(column["family"]):
        if family not in FAMILIES:
            raise RawFormatError(path, numbers[row], f"unknown family {family!r} (one of {', '.join(FAMILIES)})")
        if not column["region"][row]:
            raise RawFormatError(path, numbers[row], "empty value in column region")
        _check_labels(path, numbers[row], family, column["component"][row], column["driver"][row])
    frame = pd.DataFrame({"series_id": pd.array(column["series_id"], dtype="string"),
                          "family": pd.array(column["family"], dtype="string"),
                          "region": pd.array(column["region"], dtype="string")})
    for name in ATTRIBUTES:
        frame[name] = _numbers(path, numbers, name, column[name], nullable=False)
    frame["component"] = pd.array([int(c) if c else None for c in column["component"]], dtype="Int64")
    frame["driver"] = pd.array([d or None for d in column["driver"]], dtype="string")
    return frame.sort_values("series_id", kind="stable", ignore_index=True)


def read_family(path: Path, families: dict[str, str]) -> pd.DataFrame:
    """One family file's series-days; every series must be of the file's family in `families`."""
    family = path.stem
    lines = _lines(path, DAILY_COLUMNS)
    cells = _cells(path, lines, len(DAILY_COLUMNS))
    column = dict(zip(DAILY_COLUMNS, cells, strict=True))
    numbers = [line for line, _ in lines]
    ids = np.asarray(column["series_id"], dtype=object)
    for row, value in pd.Series(ids).drop_duplicates().items():  # each id at its first row
        if value not in families:
            raise RawFormatError(path, numbers[row], f"series_id {value!r} is not in series.csv")
        if families[value] != family:
            raise RawFormatError(path, numbers[row], f"series {value} is of family {families[value]!r}"
                                                     f" in series.csv, not {family!r}")
    dates = _dates(path, numbers, column["date"])
    frame = pd.DataFrame({"series_id": pd.array(column["series_id"], dtype="string"), "date": dates})
    duplicated = frame.duplicated(["series_id", "date"]).to_numpy()
    if duplicated.any():
        row = int(np.argmax(duplicated))
        same = ((frame["series_id"] == frame["series_id"].iloc[row]) & (frame["date"] == dates[row])).to_numpy()
        raise RawFormatError(path, numbers[row], f"duplicated series {ids[row]} on {column['date'][row]}"
                                                 f" (first at line {numbers[int(np.argmax(same))]})")
    for name in VALUES:
        frame[name] = _numbers(path, numbers, name, column[name], nullable=True)
    frame["date"] = pd.array(dates, dtype=DATE_DTYPE)
    return frame


def _family_files(raw_dir: Path, params: Params, errors: list[RawFormatError]) -> list[Path]:
    """The family csv files, sorted; any other csv file is an error."""
    found = []
    for path in sorted(raw_dir.glob("*.csv")):
        if path.name == "series.csv":
            continue
        if path.stem in FAMILIES:
            found.append(path)
            continue
        problem = RawFormatError(path, None, f"unknown csv file: expected series.csv or one of "
                                             f"{', '.join(f + '.csv' for f in FAMILIES)}")
        if params.on_error == "raise":
            raise problem
        errors.append(problem)
    return found


def _lines(path: Path, columns: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line number, text) of the non-empty data lines after a header that must equal `columns`."""
    if not path.is_file():
        raise RawFormatError(path, None, "file not found")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise RawFormatError(path, raw[: error.start].count(b"\n") + 1, "text is not valid UTF-8") from None
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if not lines[0].strip():
        raise RawFormatError(path, 1, "line 1 is empty; expected the header " + ",".join(columns))
    header = lines[0].split(",")
    if tuple(header) != columns:
        missing = [c for c in columns if c not in header]
        unknown = [c for c in header if c not in columns]
        detail = (f"missing column {missing[0]!r}" if missing else f"unknown column {unknown[0]!r}" if unknown
                  else "columns out of order")
        raise RawFormatError(path, 1, f"header must be {','.join(columns)}: {detail}")
    return [(number, line) for number, line in enumerate(lines[1:], 2) if line.strip()]


def _cells(path: Path, lines: list[tuple[int, str]], width: int) -> list[list[str]]:
    """The lines' fields, column by column; a line with another number of fields is an error."""
    counts = np.fromiter((line.count(",") for _, line in lines), dtype=np.int64, count=len(lines))
    wrong = counts != width - 1
    if wrong.any():
        number, line = lines[int(np.argmax(wrong))]
        other = next((d for d in (";", "\t", "|") if d in line), None)
        hint = f" (fields must be separated by ',', found {other!r})" if other else ""
        raise RawFormatError(path, number, f"expected {width} fields, found {line.count(',') + 1}{hint}")
    fields = np.array(",".join(line for _, line in lines).split(","), dtype=object).reshape(len(lines), width)
    return [fields[:, i].tolist() for i in range(width)]


def _check_ids(path: Path, numbers: list[int], ids: list[str]) -> None:
    seen: dict[str, int] = {}
    for number, value in zip(numbers, ids, strict=True):
        if not _SERIES_ID.match(value):
            raise RawFormatError(path, number, f"series_id {value!r} is empty or holds characters other than"
                                               " letters, digits, '_' and '-'")
        if value in seen:
            raise RawFormatError(path, number, f"duplicated series_id {value} (first at line {seen[value]})")
        seen[value] = number


def _check_labels(path: Path, number: int, family: str, component: str, driver: str) -> None:
    """A mixture series has a positive integer component, a linear series a driver; no other has either."""
    if (family == "mixture") != bool(component):
        raise RawFormatError(path, number, f"a {family} series must {'' if family == 'mixture' else 'not '}"
                                           "have a component")
    if component and not (component.isdigit() and int(component) > 0):
        raise RawFormatError(path, number, f"component {component!r} is not a positive integer")
    if (family == "linear") != bool(driver):
        raise RawFormatError(path, number, f"a {family} series must {'' if family == 'linear' else 'not '}"
                                           "have a driver")
    if driver and driver not in DRIVERS:
        raise RawFormatError(path, number, f"driver {driver!r} is not one of {', '.join(DRIVERS)}")


def _numbers(path: Path, numbers: list[int], name: str, cells: list[str], nullable: bool) -> np.ndarray:
    """Cells as float64 (empty -> NaN where `nullable`); raises on the first cell that is not a finite number."""
    text = pd.Series(cells, dtype=object)
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype="float64")
    empty = (text == "").to_numpy()
    bad = ~np.isfinite(values) & (~empty | (not nullable))
    if bad.any():
        row = int(np.argmax(bad))
        problem = (f"empty value in column {name}" if empty[row] else
                   f"value {cells[row]!r} in column {name} is not a finite number")
        raise RawFormatError(path, numbers[row], problem)
    return values


def _dates(path: Path, numbers: list[int], cells: list[str]) -> np.ndarray:
    """`YYYY-MM-DD` cells as datetime64[D]; raises on the first that is not a calendar date."""
    parsed = pd.to_datetime(pd.Series(cells, dtype=object), format="%Y-%m-%d", errors="coerce")
    shaped = np.array([bool(_ISO_DATE.match(c)) for c in cells], dtype=bool)
    bad = parsed.isna().to_numpy() | ~shaped
    if bad.any():
        row = int(np.argmax(bad))
        raise RawFormatError(path, numbers[row], f"date {cells[row]!r} is not a valid YYYY-MM-DD date")
    return parsed.to_numpy().astype("datetime64[D]")


def _empty_daily() -> pd.DataFrame:
    frame = pd.DataFrame({"series_id": pd.array([], dtype="string"), "date": pd.array([], dtype=DATE_DTYPE)})
    for name in VALUES:
        frame[name] = np.array([], dtype="float64")
    return frame
