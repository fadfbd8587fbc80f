"""Check parsed CAMELS-US rows, one vectorised test per rule; name the bad line only when one fails.

`check_forcings` and `check_streamflows` take the rows of many basins at once and raise `Rejected`
with the first bad row. Turning a row into a line of a file, and explaining why Arrow refused a
file's text (`explain_rows`), reads the file line by line: that is only done for a file known to
be bad, so the time it takes does not matter.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from stages.sources.camels_us.files import DATE_PARTS, FORCING_UNITS, delimiter_hint, forcing_head
from stages.sources.camels_us.parse import (
    STREAMFLOW_KINDS,
    Parsed,
    Unreadable,
    forcing_kinds,
    parse_forcings,
    parse_streamflows,
)
from stages.tables import RawFormatError, calendar_dates

FIRST_FORCING_ROW = 5  # the line after the 4 header lines
SENTINEL_MAX = -999.0  # forcings are gap-free, so a value this low is a missing-value code
FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")  # what Arrow reads as a number...
INTEGER = re.compile(r"-?[0-9]+")  # ... and as an integer (it also reads 0x1F, which parse refuses)
_LINE_END = re.compile(r"\r\n|\r|\n")
_FIELD_SPLIT = re.compile(r"[ \t]+")


@dataclass(frozen=True)
class Series:
    """One kind of daily record of some basins: rows basin after basin, dates increasing in each."""

    counts: np.ndarray  # rows per basin
    days: np.ndarray  # int32 days since 1970-01-01
    columns: dict[str, pa.Array]


class Rejected(Exception):
    """A rule broken at `row` (counted over all parsed rows); `first`: the earlier row it repeats."""

    def __init__(self, row: int, problem: str, first: int | None = None):
        super().__init__(problem)
        self.row, self.problem, self.first = int(row), problem, first

    def at(self, path: Path, first_line: int) -> RawFormatError:
        """The error in a file whose data rows start at `first_line` (a one-file check)."""
        lines = [number for number, _ in data_lines(path, first_line)]
        also = "" if self.first is None else f" (first at line {lines[self.first]})"
        return RawFormatError(path, lines[self.row], self.problem + also)


def check_forcing_file(path: Path) -> Series:
    """One forcing file's rows, parsed and checked; a problem raises naming the line."""
    try:
        return check_forcings(parse_forcings([path]))
    except Unreadable:
        _, names, _ = forcing_head(path, path.read_bytes())
        raise explain_rows(path, FIRST_FORCING_ROW, forcing_kinds(names)) from None
    except Rejected as rejected:
        raise rejected.at(path, FIRST_FORCING_ROW) from None


def check_streamflow_file(path: Path, gauge: str) -> Series:
    """One streamflow file's rows, parsed and checked; a problem raises naming the line."""
    try:
        return check_streamflows(parse_streamflows([path]), [gauge])
    except Unreadable:
        raise explain_rows(path, 1, STREAMFLOW_KINDS) from None
    except Rejected as rejected:
        raise rejected.at(path, 1) from None


def check_forcings(parsed: Parsed) -> Series:
    """Forcing rows: no missing-value code, real dates, each date once per basin; sorted by date."""
    values = {name: parsed.table.column(name).to_numpy() for name in FORCING_UNITS}
    if min(v.min(initial=np.inf) for v in values.values()) <= SENTINEL_MAX:
        stacked = np.column_stack(list(values.values()))
        row, col = np.argwhere(stacked <= SENTINEL_MAX)[0]
        raise Rejected(row, f"unexpected sentinel {stacked[row, col]:g} in column {list(values)[col]}"
                       " (forcings are gap-free)")
    days, order = check_dates(parsed)
    return Series(parsed.counts, days, {name: pa.array(v if order is None else v[order]) for name, v in values.items()})


def check_streamflows(parsed: Parsed, gauges: list[str]) -> Series:
    """Streamflow rows: the basin's own gauge id, real dates, each date once per basin; sorted by date."""
    found = parsed.table.column("gauge_id").chunk(0)
    expected = repeat_gauges(gauges, parsed.counts)
    if not found.equals(expected):
        row = int(np.argmin(found.to_numpy(zero_copy_only=False) == expected.to_numpy(zero_copy_only=False)))
        basin = gauges[np.searchsorted(np.cumsum(parsed.counts), row, side="right")]
        raise Rejected(row, f"gauge id {found[row].as_py()!r} does not match the basin {basin}")
    days, order = check_dates(parsed)
    columns = {name: parsed.table.column(name).chunk(0) for name in ("qobs_cfs", "qobs_flag")}
    return Series(parsed.counts, days, {name: c if order is None else c.take(order) for name, c in columns.items()})


def check_dates(parsed: Parsed) -> tuple[np.ndarray, np.ndarray | None]:
    """Dates as int32 days since 1970 sorted within each basin; the row order that sorts them (None: as read)."""
    years, months, days = (parsed.table.column(part).to_numpy() for part in DATE_PARTS)
    dates, valid = calendar_dates(years, months, days)
    if not valid.all():
        row = int(np.argmin(valid))
        raise Rejected(row, f"impossible date {years[row]:04d}-{months[row]:02d}-{days[row]:02d}")
    numbers = dates.view(np.int64).astype(np.int32)
    basin = np.repeat(np.arange(len(parsed.counts)), parsed.counts)
    if ((np.diff(numbers) > 0) | (np.diff(basin) > 0)).all():  # the usual case: already sorted
        return numbers, None
    order = np.lexsort((numbers, basin))  # stable: a repeated date comes after its first row
    same = (np.diff(numbers[order]) == 0) & (np.diff(basin[order]) == 0)
    if same.any():
        row = int(order[1:][same].min())
        first = int(np.flatnonzero((numbers == numbers[row]) & (basin == basin[row]))[0])
        raise Rejected(row, f"duplicated date {dates[row]}", first)
    return numbers[order], order


def repeat_gauges(gauges: list[str], counts: np.ndarray) -> pa.Array:
    """`gauges[i]` repeated `counts[i]` times, as strings."""
    indices = pa.array(np.repeat(np.arange(len(gauges), dtype=np.int32), counts))
    return pa.DictionaryArray.from_arrays(indices, pa.array(gauges, pa.string())).cast(pa.string())


def explain_rows(path: Path, first_line: int, kinds: dict[str, str]) -> RawFormatError:
    """Why Arrow refused the rows from `first_line` on: the first bad line (`kinds`: name -> int/float/text)."""
    raw = path.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = len(_LINE_END.findall(raw[:error.start].decode("utf-8"))) + 1
        return RawFormatError(path, line, f"not UTF-8 text (byte 0x{raw[error.start]:02x})")
    rows = data_lines(path, first_line)
    if not rows:
        return RawFormatError(path, first_line, "file is empty" if first_line == 1 else "no rows")
    for number, line in rows:
        fields = _FIELD_SPLIT.split(line.strip(" \t"))
        if len(fields) != len(kinds):
            problem = f"expected {len(kinds)} fields, found {len(fields)}{delimiter_hint(line)}"
            return RawFormatError(path, number, problem)
        for (name, kind), field in zip(kinds.items(), fields, strict=True):
            if kind == "float" and not (FLOAT.fullmatch(field) and math.isfinite(float(field))):
                return RawFormatError(path, number, f"value {field!r} in {name} is not a number")
            if kind == "int" and not INTEGER.fullmatch(field):
                return RawFormatError(path, number, f"value {field!r} in {name} is not an integer")
            if kind == "int" and not -2**63 <= int(field) < 2**63:
                return RawFormatError(path, number, f"value {field} in {name} is outside the 64-bit integer range")
    return RawFormatError(path, None, "rows could not be parsed")  # a case the rules above miss


def data_lines(path: Path, first_line: int) -> list[tuple[int, str]]:
    """(1-based line number, text) of the lines that are rows: not blank, from `first_line` on.

    As for the parser, only LF, CRLF and CR end a line and only spaces and tabs are blank (a
    no-break space or a form feed is a field's content); a leading byte-order mark is dropped.
    """
    text = path.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff")
    return [(n, line) for n, line in enumerate(_LINE_END.split(text), 1) if n >= first_line and line.strip(" \t")]

