"""Low-level parsing of FLUXNET-CH4 / AmeriFlux csv files: header, rows, timestamps, line numbers.

Rows are parsed with the pyarrow csv reader (multithreaded, typed columns selected by name, exact
shortest-round-trip floats, CRLF accepted, quoting disabled); variable columns stay Arrow columns
with the `-9999` sentinel in place until they are copied into the stacked output. The checks are
vectorised; when one fails (a field pyarrow cannot parse) the file is re-read line by line to name
the first bad line and field. Non-finite tokens (`inf`, `-inf`, `nan` in any case, and literals
too large for float64) are values the published product ships in derived columns: they become NaN
(null in the tables) and are counted per column (`RawCsv.nonfinite`) for the quarantine report.
Leading `#` comment lines (AmeriFlux BASE) are skipped; empty lines are ignored but still counted,
so every line number is the physical line in the file.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from stages.tables import RawFormatError, calendar_dates, finite_float

SENTINEL = -9999.0
_DIGITS = re.compile(r"[0-9]+")
_LINE_END = re.compile(r"\r\n|\r|\n")
# what the pyarrow parser takes as a float64 (ASCII digits; inf, infinity and nan in any case)
_FLOAT = re.compile(r"[ \t]*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf(inity)?|nan(\([^)]*\))?)[ \t]*",
                    re.IGNORECASE)


@dataclass(frozen=True)
class RawCsv:
    """One parsed file: int64 timestamps as numpy, float64 variables as Arrow columns (sentinels kept)."""

    path: Path
    header_line: int  # 1-based physical line of the column header
    names: tuple[str, ...]
    stamps: dict[str, np.ndarray]  # the time columns, int64
    columns: dict[str, pa.ChunkedArray]  # the variable columns in file order, float64 (NaN where non-finite)
    rows: int
    nonfinite: dict[str, int] = field(default_factory=dict)  # raw column -> non-finite tokens set to NaN


def read_raw_csv(path: Path, time_columns: tuple[str, ...]) -> RawCsv:
    """Parse a file whose header starts with `time_columns` (integer timestamps) then variables."""
    header_line, header = read_header(path, time_columns)
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
    if table is None:
        raise _diagnose(path, header_line, names, time_columns)
    if table.num_rows == 0:
        raise RawFormatError(path, header_line, "no data rows after the column header")
    columns, nonfinite = {}, {}
    for name in names:
        if name not in time_columns:
            columns[name], count = _finite_or_nan(table.column(name))
            nonfinite |= {name: count} if count else {}
    stamps = {name: table.column(name).to_numpy() for name in time_columns}
    return RawCsv(path, header_line, names, stamps, columns, table.num_rows, nonfinite)


def _finite_or_nan(column: pa.ChunkedArray) -> tuple[pa.ChunkedArray, int]:
    """The column with every infinity as NaN, and how many values are not finite.

    One summation decides for the usual all-finite column; a non-finite sum (or an overflowing
    one) is confirmed value by value.
    """
    total = pc.sum(column).as_py()
    if total is None or math.isfinite(total):
        return column, 0
    finite = pc.is_finite(column)
    count = column.length() - pc.sum(finite).as_py()
    if not count:
        return column, 0  # the sum overflowed: large values, not bad data
    return pc.if_else(finite, column, pa.scalar(math.nan)), count

def line_of_row(raw: RawCsv, row: int) -> int:
    """The physical line number of data row `row` (0-based), skipping empty lines as the parser."""
    lines = _lines(raw.path)
    seen = -1
    for number in range(raw.header_line + 1, len(lines) + 1):
        if lines[number - 1]:
            seen += 1
            if seen == row:
                return number
    raise IndexError(f"{raw.path}: no data row {row}")


def row_error(raw: RawCsv, row: int, problem: str) -> RawFormatError:
    """A RawFormatError naming the physical line of data row `row`."""
    return RawFormatError(raw.path, line_of_row(raw, row), problem)


def parse_dates(raw: RawCsv, column: str) -> np.ndarray:
    """`YYYYMMDD` integers -> datetime64[D]; a bad or impossible date names its line."""
    return _days(raw, column, raw.stamps[column], 8).view("datetime64[D]")


def parse_minutes(raw: RawCsv, column: str) -> np.ndarray:
    """`YYYYMMDDHHMM` integers -> datetime64[m]; a bad or impossible time names its line."""
    stamps = raw.stamps[column]
    days = _days(raw, column, stamps, 12)
    clock = stamps % 10000
    hours, mins = clock // 100, clock % 100
    bad = (hours > 23) | (mins > 59)
    if bad.any():
        row = int(np.argmax(bad))
        raise row_error(raw, row, f"impossible time {stamps[row]} in {column}")
    return (days * 1440 + hours * 60 + mins).view("datetime64[m]")


def first_duplicate(raw: RawCsv, stamps: np.ndarray, column: str) -> RawFormatError | None:
    """An error for the first repeated timestamp, naming both lines; None if all are unique."""
    if len(stamps) < 2 or (stamps[1:] > stamps[:-1]).all():
        return None
    order = np.argsort(stamps, kind="stable")
    repeated = np.flatnonzero(stamps[order][1:] == stamps[order][:-1])
    if not len(repeated):
        return None
    pairs = [(int(order[i + 1]), int(order[i])) for i in repeated]
    row, first = min(pairs)
    text = raw.stamps[column][row]
    return row_error(raw, row, f"duplicated {column} {text} (first at line {line_of_row(raw, first)})")


def _days(raw: RawCsv, column: str, stamps: np.ndarray, digits: int) -> np.ndarray:
    """Days since 1970 of each stamp's date (int64), after the sentinel, width and date checks.

    Rows come in runs of one day, so the calendar is checked and converted once per run.
    """
    sentinel = stamps == SENTINEL
    if sentinel.any():
        row = int(np.argmax(sentinel))
        raise row_error(raw, row, f"unexpected sentinel -9999 in {column}")
    width = (stamps >= 10 ** (digits - 1)) & (stamps < 10 ** digits)
    if not width.all():
        row = int(np.argmin(width))
        layout = "YYYYMMDD" if digits == 8 else "YYYYMMDDHHMM"
        raise row_error(raw, row, f"value {stamps[row]} in {column} is not a {layout} timestamp")
    day_keys = stamps // 10 ** (digits - 8)
    starts = np.concatenate([[0], np.flatnonzero(day_keys[1:] != day_keys[:-1]) + 1])
    keys = day_keys[starts]
    dates, valid = calendar_dates(keys // 10000, keys // 100 % 100, keys % 100)
    if not valid.all():
        row = int(starts[np.argmin(valid)])
        raise row_error(raw, row, f"impossible date in {column} {stamps[row]}")
    return np.repeat(dates.astype(np.int64), np.diff(np.append(starts, len(stamps))))


def _lines(path: Path) -> list[str]:
    """The physical lines as the parser sees them: only LF, CRLF and CR end one, only "" is blank."""
    return _LINE_END.split(path.read_bytes().decode("utf-8", errors="replace"))


def _hint(line: str) -> str:
    found = [d for d in (";", "\t", "|") if d in line]
    return f" (fields must be separated by commas, found {found[0]!r})" if found else ""


def read_header(path: Path, time_columns: tuple[str, ...]) -> tuple[int, str]:
    """(line number, text) of the column header after any leading `#` comment lines, checked.

    Only the head of the file is read.
    """
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
    """The error for the first line the fast parser could not turn into numbers."""
    lines = _lines(path)
    rows = [(n, line) for n, line in enumerate(lines, 1) if n > header_line and line]
    if not rows:
        return RawFormatError(path, header_line, "no data rows after the column header")
    for number, line in rows:
        fields = line.split(",")
        if len(fields) != len(names):
            return RawFormatError(path, number, f"expected {len(names)} fields, found {len(fields)}"
                                  f"{_hint(line)}")
        for name, token in zip(names, fields, strict=True):
            if name in time_columns and token != "-9999" and not (_DIGITS.fullmatch(token) and int(token) < 2**63):
                return RawFormatError(path, number, f"value {token!r} in {name} is not an integer "
                                      "timestamp")
            if name not in time_columns and not _FLOAT.fullmatch(token):
                what = "empty value" if token == "" else f"value {token!r}"
                return RawFormatError(path, number, f"{what} in column {name} is not a number")
    return RawFormatError(path, None, "rows could not be parsed")
