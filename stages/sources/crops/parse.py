"""Strict reading of comma-separated tables with one header row (the crop sources' raw files).

`read_header` checks the first line, `read_rows` parses the rows with pyarrow's CSV reader (fast
path) and, when that fails, re-scans the text to name the first bad line (slow path, errors only).
Every problem becomes a `RawFormatError` naming file, line and cause. LF and CRLF endings read
identically; empty lines are skipped; a UTF-8 byte-order mark before the header is ignored; an
empty cell is null only where the column allows it.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from stages.tables import RawFormatError

Kind = Literal["text", "float", "int", "date"]
DATE_DTYPE = pd.ArrowDtype(pa.date32())
_ARROW_TYPES = {"text": pa.string(), "float": pa.float64(), "int": pa.int64(), "date": pa.string()}
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
_YYYYMMDD = r"^\d{8}$"
_OTHER_DELIMITERS = (";", "\t", "|")


@dataclass(frozen=True)
class Field:
    """One column of a raw file: its type, whether empty cells are allowed and its valid range."""

    kind: Kind = "float"
    nullable: bool = False
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Rows:
    """The parsed rows of one file, columns named as in its header; `empty` marks the empty cells."""

    path: Path
    table: pa.Table
    frame: pd.DataFrame
    empty: dict[str, np.ndarray]

    def error(self, row: int, problem: str) -> RawFormatError:
        """A RawFormatError at the file line that holds data row `row` (0-based)."""
        return RawFormatError(self.path, data_lines(self.path)[row][0], problem)

    def check_unique(self, columns: list[str]) -> None:
        """Raise on the first row whose values in `columns` repeat an earlier row's."""
        duplicated = self.frame.duplicated(columns).to_numpy()
        if duplicated.any():
            row = int(np.argmax(duplicated))
            values = self.frame.loc[row, columns]
            same = (self.frame[columns] == values).all(axis=1).to_numpy()
            first = data_lines(self.path)[int(np.argmax(same))][0]
            described = " and ".join(f"{c} {v}" for c, v in zip(columns, values, strict=True))
            raise self.error(row, f"duplicated {described} (first at line {first})")


@dataclass(frozen=True)
class Fill:
    """Cells of one file and column that held a fill value (or nothing) and became null."""

    path: Path
    column: str
    value: str
    rows: int
    first_line: int


def fills_of(rows: Rows, column: str, mask: np.ndarray, values: np.ndarray | None = None) -> list[Fill]:
    """One `Fill` per distinct raw value among the masked cells (`""` for empty cells)."""
    if not mask.any():
        return []
    lines = data_lines(rows.path)
    texts = np.full(len(mask), "", dtype=object) if values is None else values.astype(str).astype(object)
    fills = []
    for value in sorted(set(texts[mask])):
        hits = mask & (texts == value)
        first = lines[int(np.argmax(hits))][0]
        fills.append(Fill(rows.path, column, value, int(hits.sum()), first))
    return fills


def read_header(path: Path) -> list[str]:
    """The column names on line 1; raises on an empty file or another delimiter."""
    with path.open("rb") as handle:
        first = handle.readline()
        second = handle.readline()
    if not first.strip() and not second:
        raise RawFormatError(path, 1, "file is empty")
    line = first.decode("utf-8-sig", errors="replace").rstrip("\r\n")
    if not line.strip():
        raise RawFormatError(path, 1, "line 1 is blank; expected the header")
    names = line.split(",")
    found = [d for d in _OTHER_DELIMITERS if d in line]
    if len(names) == 1 and found:
        raise RawFormatError(path, 1, f"fields must be separated by ',', found {found[0]!r}")
    if any(_parses_as_float(name) for name in names):
        raise RawFormatError(path, 1, f"missing header: line 1 is a data row ({line[:60]!r})")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise RawFormatError(path, 1, f"duplicated column {repeated[0]!r} in the header")
    return names


def check_columns(path: Path, names: list[str], known: dict[str, Field], required: set[str]) -> None:
    """Raise on a header column that is not known or a required column that is missing."""
    unknown = [name for name in names if name not in known]
    if unknown:
        raise RawFormatError(path, 1, f"unknown column {unknown[0]!r} in the header")
    missing = [name for name in known if name in required and name not in names]
    if missing:
        raise RawFormatError(path, 1, f"missing column(s) {', '.join(missing)} in the header")


def read_rows(path: Path, names: list[str], fields: dict[str, Field]) -> Rows:
    """Parse every data row, check emptiness, numbers, ranges and dates; dates stay YYYYMMDD text."""
    types = {name: _ARROW_TYPES[fields[name].kind] for name in names}
    try:
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=","),
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=[""],
                                                 strings_can_be_null=True,
                                                 quoted_strings_can_be_null=True),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as error:
        raise _locate(path, names, fields) or RawFormatError(path, None, f"unreadable: {error}") from None
    if table.num_rows == 0:
        raise RawFormatError(path, 2, "no data rows after the header")
    frame = pd.DataFrame({name: _to_pandas(table[name], fields[name].kind) for name in names})
    empty = {name: table[name].is_null().to_numpy(zero_copy_only=False) for name in names}
    rows = Rows(path, table, frame, empty)
    for name in names:
        _check_values(rows, name, fields[name])
    return rows


def data_lines(path: Path) -> list[tuple[int, str]]:
    """(1-based line number, text) of the non-empty lines after the header (the parser's rows)."""
    lines = _physical_lines(path.read_bytes().decode("utf-8", errors="replace"))
    return [(n, text) for n, line in enumerate(lines, 1) if n > 1 and (text := line.rstrip("\r\n"))]


def _physical_lines(text: str) -> list[str]:
    """The lines with their ends, ended as the parser ends them: by LF, CRLF or CR only."""
    return list(io.StringIO(text, newline=""))


def to_dates(text: pa.ChunkedArray) -> pa.ChunkedArray:
    """YYYYMMDD strings (already validated) as `date32` values."""
    return pc.strptime(text, format="%Y%m%d", unit="s").cast(pa.date32())


def string_array(values: pa.Array | pa.ChunkedArray) -> pd.arrays.ArrowStringArray:
    """A pandas `string` array over arrow string values, without copying through Python objects."""
    return pd.arrays.ArrowStringArray(values)


def _to_pandas(column: pa.ChunkedArray, kind: Kind) -> pd.Series:
    if kind in ("text", "date"):
        return pd.Series(string_array(column))
    if kind == "int" and column.null_count:
        return pd.Series(column.to_pandas(), dtype="Int64")
    return pd.Series(column.to_numpy(), dtype="float64" if kind == "float" else "int64")


def _check_values(rows: Rows, name: str, field: Field) -> None:
    series, empty = rows.frame[name], rows.empty[name]
    if empty.any() and not field.nullable:
        raise rows.error(int(np.argmax(empty)), f"empty value in column {name}")
    if field.kind == "date":
        text = rows.table[name]
        parsed = pc.strptime(text, format="%Y%m%d", unit="s", error_is_null=True)
        same = pc.equal(pc.strftime(parsed, format="%Y%m%d"), text)  # 20010230 parses, to March 2
        shaped = pc.and_(pc.match_substring_regex(text, _YYYYMMDD), same).fill_null(False)
        bad = ~shaped.to_numpy(zero_copy_only=False) & ~empty
        if bad.any():
            row = int(np.argmax(bad))
            raise rows.error(row, f"date {series.iloc[row]!r} in column {name} is not a valid YYYYMMDD date")
    if field.kind not in ("float", "int"):
        return
    values = series.to_numpy(dtype="float64", na_value=np.nan)
    present = ~empty
    bad = present & ~np.isfinite(values)  # a "nan" or "inf" token: parsed, but not a value
    if bad.any():
        number, line = data_lines(rows.path)[int(np.argmax(bad))]
        token = line.split(",")[list(rows.frame.columns).index(name)]
        raise RawFormatError(rows.path, number, f"value {token!r} in column {name} is not a number")
    low = -np.inf if field.low is None else field.low
    high = np.inf if field.high is None else field.high
    outside = present & ((values < low) | (values > high))
    if outside.any():
        row = int(np.argmax(outside))
        if low == 0 and values[row] < 0:
            raise rows.error(row, f"negative value {values[row]:g} in column {name}")
        raise rows.error(row, f"value {values[row]:g} in column {name} is outside the valid range "
                              f"[{low:g}, {high:g}] (unexpected sentinel?)")


def _locate(path: Path, names: list[str], fields: dict[str, Field]) -> RawFormatError | None:
    """The first line the fast parser would reject: wrong field count or a value of the wrong type."""
    raw = path.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return RawFormatError(path, raw[: error.start].count(b"\n") + 1, "text is not valid UTF-8")
    for number, line, values in _records(raw.decode("utf-8")):
        if len(values) != len(names):
            hint = [d for d in _OTHER_DELIMITERS if d in line]
            extra = f" (fields must be separated by ',', found {hint[0]!r})" if hint else ""
            return RawFormatError(path, number, f"expected {len(names)} fields, found {len(values)}{extra}")
        for name, value in zip(names, values, strict=True):
            kind = fields[name].kind
            if value == "" or kind in ("text", "date"):
                continue
            if kind == "int" and not _INTEGER.fullmatch(value):
                return RawFormatError(path, number, f"value {value!r} in column {name} is not an integer")
            if kind == "float" and not _parses_as_float(value):
                return RawFormatError(path, number, f"value {value!r} in column {name} is not a number")
    return None


def _records(text: str) -> Iterator[tuple[int, str, list[str]]]:
    """(first line, text, fields) of each non-empty record after the header.

    Quotes are honoured as the fast parser honours them: a quoted field may hold commas and line ends.
    """
    lines = _physical_lines(text)
    reader = csv.reader(lines)
    start = 1
    for values in reader:
        number, start = start, reader.line_num + 1
        if number > 1 and values:
            yield number, "".join(lines[number - 1:reader.line_num]).rstrip("\r\n"), values


def _parses_as_float(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return "_" not in token
