"""Step 2, parse: one FLUXNET-CH4 / AmeriFlux csv file -> typed Arrow columns, and line numbers on failure.

The column header is read once, from the head of the file, when the reader plans its files
(`read_header`); the rows are parsed by the pyarrow csv reader with types from that header
(timestamps int64, variables float64, exact shortest-round-trip floats, CRLF accepted, quoting
off). When pyarrow cannot parse a field, `diagnose` re-reads the file line by line to name the
first bad line and field: the slow path runs only for a file that fails.

Non-finite tokens (`inf`, `-inf`, `nan` in any case, literals too large for float64) are values
the published product ships in derived columns: they become NaN and are counted per column
(`RawCsv.nonfinite`) for the quarantine report. Leading `#` comment lines (AmeriFlux BASE) are
skipped; empty lines are ignored but still counted, so every line number is the physical line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from stages.tables import RawFormatError, finite_float

SENTINEL = -9999.0
_DIGITS = re.compile(r"[0-9]+")
_LINE_END = re.compile(r"\r\n|\r|\n")
# what the pyarrow parser takes as a float64 (ASCII digits; inf, infinity and nan in any case)
_FLOAT = re.compile(r"[ \t]*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf(inity)?|nan(\([^)]*\))?)[ \t]*",
                    re.IGNORECASE)


@dataclass(frozen=True)
class Header:
    """A file's column header: its physical line (1-based) and the column names."""

    line: int
    names: tuple[str, ...]


@dataclass(frozen=True)
class RawCsv:
    """One parsed file: int64 timestamps as numpy, float64 variables as Arrow (sentinels kept, NaN if non-finite)."""

    path: Path
    header: Header
    stamps: dict[str, np.ndarray]
    columns: dict[str, pa.ChunkedArray]  # the variable columns in file order
    nonfinite: dict[str, int]  # raw column -> non-finite tokens set to NaN

    @property
    def rows(self) -> int:
        """Number of data rows."""
        return len(next(iter(self.stamps.values())))


def read_header(path: Path, time_columns: tuple[str, ...]) -> Header:
    """The column header after any leading `#` comment lines, checked; only the head of the file is read."""
    number, header = 0, None
    with path.open("rb") as handle:
        while header is None and (raw := handle.readline()):
            number += 1
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n").removeprefix("\ufeff")
            header = None if line.startswith("#") else line
    if header is None:
        raise RawFormatError(path, number + 1 if number else 1, "file is empty" if not number
                             else "file holds only comment lines, no column header")
    expected = ",".join(time_columns)
    if not header.startswith(expected + ",") and header != expected:
        if not header.strip():
            problem = "expected the column header, found an empty line"
        elif finite_float(header.split(",")[0]) is not None:
            problem = f"missing column header: line {number} is a data row, expected {expected}, ..."
        else:
            problem = f"column header must start with {expected}, found {header[:40]!r}{_hint(header)}"
        raise RawFormatError(path, number, problem)
    names = tuple(header.split(","))
    repeated = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if repeated is not None:
        raise RawFormatError(path, number, f"duplicated column {repeated!r} in the column header")
    return Header(number, names)


def read_csv(path: Path, header: Header, time_columns: tuple[str, ...]) -> RawCsv:
    """Parse the rows below `header`: `time_columns` as int64, every other column as float64."""
    types = {name: pa.int64() if name in time_columns else pa.float64() for name in header.names}
    try:
        table = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(skip_rows=header.line, column_names=list(header.names)),
            parse_options=pcsv.ParseOptions(delimiter=",", quote_char=False),
            convert_options=pcsv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError):
        raise diagnose(path, header, time_columns) from None
    if table.num_rows == 0:
        raise RawFormatError(path, header.line, "no data rows after the column header")
    columns, nonfinite = {}, {}
    for name in header.names:
        if name not in time_columns:
            columns[name], count = _finite_or_nan(table.column(name))
            nonfinite |= {name: count} if count else {}
    stamps = {name: table.column(name).to_numpy() for name in time_columns}
    return RawCsv(path, header, stamps, columns, nonfinite)


def row_error(raw: RawCsv, row: int, problem: str) -> RawFormatError:
    """A RawFormatError naming the physical line of data row `row` (0-based; empty lines skipped)."""
    seen = -1
    for number, line in enumerate(_lines(raw.path)[raw.header.line:], raw.header.line + 1):
        seen += bool(line)
        if line and seen == row:
            return RawFormatError(raw.path, number, problem)
    raise IndexError(f"{raw.path}: no data row {row}")


def diagnose(path: Path, header: Header, time_columns: tuple[str, ...]) -> RawFormatError:
    """The error for the first line the fast parser could not turn into numbers."""
    rows = [(n, line) for n, line in enumerate(_lines(path), 1) if n > header.line and line]
    if not rows:
        return RawFormatError(path, header.line, "no data rows after the column header")
    for number, line in rows:
        fields = line.split(",")
        if len(fields) != len(header.names):
            return RawFormatError(path, number, f"expected {len(header.names)} fields, found {len(fields)}"
                                  f"{_hint(line)}")
        for name, token in zip(header.names, fields, strict=True):
            if name in time_columns and token != "-9999" and not (_DIGITS.fullmatch(token) and int(token) < 2**63):
                return RawFormatError(path, number, f"value {token!r} in {name} is not an integer timestamp")
            if name not in time_columns and not _FLOAT.fullmatch(token):
                what = "empty value" if token == "" else f"value {token!r}"
                return RawFormatError(path, number, f"{what} in column {name} is not a number")
    return RawFormatError(path, None, "rows could not be parsed")


def _finite_or_nan(column: pa.ChunkedArray) -> tuple[pa.ChunkedArray, int]:
    """The column with every infinity as NaN, and how many values are not finite.

    One summation decides for the usual all-finite column; a non-finite (or overflowing) sum is
    confirmed value by value.
    """
    total = pc.sum(column).as_py()
    if total is None or math.isfinite(total):
        return column, 0
    finite = pc.is_finite(column)
    count = column.length() - pc.sum(finite).as_py()
    if not count:
        return column, 0  # the sum overflowed: large values, not bad data
    return pc.if_else(finite, column, pa.scalar(math.nan)), count


def _lines(path: Path) -> list[str]:
    """The physical lines as the parser sees them: only LF, CRLF and CR end one, only "" is blank."""
    return _LINE_END.split(path.read_bytes().decode("utf-8", errors="replace"))


def _hint(line: str) -> str:
    found = [d for d in (";", "\t", "|") if d in line]
    return f" (fields must be separated by commas, found {found[0]!r})" if found else ""
