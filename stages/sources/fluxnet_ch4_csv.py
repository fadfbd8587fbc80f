"""Low-level parsing of FLUXNET-CH4 / AmeriFlux csv files: header, rows, timestamps, line numbers.

Rows are parsed with the pyarrow csv reader (exact shortest-round-trip floats, CRLF accepted,
quoting disabled). When it fails, or a value is not finite, the file is re-read line by line to
name the first bad line and field. Leading `#` comment lines (AmeriFlux BASE) are skipped; blank
lines are ignored but still counted, so every line number is the physical line in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from stages.tables import RawFormatError, calendar_dates, finite_float

SENTINEL = -9999.0
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class RawCsv:
    """One parsed file: raw column names and values (int64 timestamps, float64 variables)."""

    path: Path
    header_line: int  # 1-based physical line of the column header
    names: tuple[str, ...]
    values: dict[str, np.ndarray]

    @property
    def rows(self) -> int:
        """Number of data rows."""
        return len(self.values[self.names[0]])


def read_raw_csv(path: Path, time_columns: tuple[str, ...]) -> RawCsv:
    """Parse a file whose header starts with `time_columns` (integer timestamps) then variables."""
    header_line, header = _header(path, time_columns)
    names = tuple(header.split(","))
    types = {name: pa.int64() if name in time_columns else pa.float64() for name in names}
    try:
        table = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(skip_rows=header_line, column_names=list(names)),
            parse_options=pcsv.ParseOptions(delimiter=",", quote_char=False),
            convert_options=pcsv.ConvertOptions(column_types=types, null_values=[],
                                                strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError):
        table = None
    if table is not None:
        values = {name: table.column(name).to_numpy() for name in names}
        floats = [values[name] for name in names if name not in time_columns]
        if all(np.isfinite(column).all() for column in floats):
            if table.num_rows == 0:
                raise RawFormatError(path, header_line, "no data rows after the column header")
            return RawCsv(path, header_line, names, values)
    raise _diagnose(path, header_line, names, time_columns)


def line_of_row(raw: RawCsv, row: int) -> int:
    """The physical line number of data row `row` (0-based), skipping blank lines as the parser."""
    lines = _lines(raw.path)
    seen = -1
    for number in range(raw.header_line + 1, len(lines) + 1):
        if lines[number - 1].strip():
            seen += 1
            if seen == row:
                return number
    raise IndexError(f"{raw.path}: no data row {row}")


def row_error(raw: RawCsv, row: int, problem: str) -> RawFormatError:
    """A RawFormatError naming the physical line of data row `row`."""
    return RawFormatError(raw.path, line_of_row(raw, row), problem)


def parse_dates(raw: RawCsv, column: str) -> np.ndarray:
    """`YYYYMMDD` integers -> datetime64[D]; a bad or impossible date names its line."""
    stamps = raw.values[column]
    days = _calendar(raw, column, stamps, 8, stamps // 10000, stamps // 100 % 100, stamps % 100)
    return days


def parse_minutes(raw: RawCsv, column: str) -> np.ndarray:
    """`YYYYMMDDHHMM` integers -> datetime64[m]; a bad or impossible time names its line."""
    stamps = raw.values[column]
    parts = stamps // 100000000, stamps // 1000000 % 100, stamps // 10000 % 100
    days = _calendar(raw, column, stamps, 12, *parts)
    hours, minutes = stamps // 100 % 100, stamps % 100
    bad = (hours > 23) | (minutes > 59)
    if bad.any():
        row = int(np.argmax(bad))
        raise row_error(raw, row, f"impossible time {stamps[row]} in {column}")
    return days.astype("datetime64[m]") + hours * 60 + minutes


def first_duplicate(raw: RawCsv, stamps: np.ndarray, column: str) -> RawFormatError | None:
    """An error for the first repeated timestamp, naming both lines; None if all are unique."""
    order = np.argsort(stamps, kind="stable")
    repeated = np.flatnonzero(stamps[order][1:] == stamps[order][:-1])
    if not len(repeated):
        return None
    pairs = [(int(order[i + 1]), int(order[i])) for i in repeated]
    row, first = min(pairs)
    text = raw.values[column][row]
    return row_error(raw, row, f"duplicated {column} {text} (first at line {line_of_row(raw, first)})")


def _calendar(raw: RawCsv, column: str, stamps: np.ndarray, digits: int, years: np.ndarray,
              months: np.ndarray, days: np.ndarray) -> np.ndarray:
    sentinel = stamps == SENTINEL
    if sentinel.any():
        row = int(np.argmax(sentinel))
        raise row_error(raw, row, f"unexpected sentinel -9999 in {column}")
    width = (stamps >= 10 ** (digits - 1)) & (stamps < 10 ** digits)
    if not width.all():
        row = int(np.argmin(width))
        layout = "YYYYMMDD" if digits == 8 else "YYYYMMDDHHMM"
        raise row_error(raw, row, f"value {stamps[row]} in {column} is not a {layout} timestamp")
    dates, valid = calendar_dates(years, months, days)
    if not valid.all():
        row = int(np.argmin(valid))
        raise row_error(raw, row, f"impossible date in {column} {stamps[row]}")
    return dates


def _lines(path: Path) -> list[str]:
    return path.read_bytes().decode("utf-8", errors="replace").splitlines()


def _hint(line: str) -> str:
    found = [d for d in (";", "\t", "|") if d in line]
    return f" (fields must be separated by commas, found {found[0]!r})" if found else ""


def _header(path: Path, time_columns: tuple[str, ...]) -> tuple[int, str]:
    """(line number, text) of the column header after any leading `#` comment lines."""
    number, header = 0, None
    with path.open("rb") as handle:  # only the head: sub-daily files can be large
        while header is None and (raw := handle.readline()):
            number += 1
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n").removeprefix("\ufeff")
            header = None if line.startswith("#") else line
    if header is None:
        raise RawFormatError(path, number + 1 if number else 1, "file is empty" if not number
                             else "file holds only comment lines, no column header")
    first = header.split(",")[0]
    expected = ",".join(time_columns)
    if not header.startswith(expected + ",") and header != expected:
        if not header.strip():
            problem = "expected the column header, found an empty line"
        elif finite_float(first) is not None:
            problem = f"missing column header: line {number} is a data row, expected {expected}, ..."
        else:
            problem = f"column header must start with {expected}, found {header[:40]!r}{_hint(header)}"
        raise RawFormatError(path, number, problem)
    names = header.split(",")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise RawFormatError(path, number, f"duplicated column {name!r} in the column header")
        seen.add(name)
    return number, header


def _diagnose(path: Path, header_line: int, names: tuple[str, ...],
              time_columns: tuple[str, ...]) -> RawFormatError:
    """The error for the first line the fast parser could not turn into finite numbers."""
    lines = _lines(path)
    rows = [(n, line) for n, line in enumerate(lines, 1) if n > header_line and line.strip()]
    if not rows:
        return RawFormatError(path, header_line, "no data rows after the column header")
    for number, line in rows:
        fields = line.split(",")
        if len(fields) != len(names):
            return RawFormatError(path, number, f"expected {len(names)} fields, found {len(fields)}"
                                  f"{_hint(line)}")
        for name, field in zip(names, fields, strict=True):
            if name in time_columns and not _DIGITS.fullmatch(field) and field != "-9999":
                return RawFormatError(path, number, f"value {field!r} in {name} is not an integer "
                                      "timestamp")
            if name not in time_columns and finite_float(field) is None:
                what = "empty value" if field == "" else f"value {field!r}"
                return RawFormatError(path, number, f"{what} in column {name} is not a number")
    return RawFormatError(path, None, "rows could not be parsed")
