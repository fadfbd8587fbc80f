"""Line-exact parsing of one CAMELS-US forcing or streamflow text file.

The precise path: every problem is reported with the file, the line and what is wrong. The
columnar reader (`camels_us_columnar`) parses many files at once and comes back here for the
files of a chunk it could not take in one go.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from stages.sources.camels_us_attributes import delimiter_hint
from stages.tables import RawFormatError, calendar_dates, finite_float

SENTINEL_MAX = -999.0  # forcings are gap-free, so a value this low is a missing-value code
FORCING_COLUMNS = {  # lower-cased raw name -> (column, unit)
    "dayl(s)": ("dayl_s", "s"), "prcp(mm/day)": ("prcp_mm_d", "mm/d"),
    "srad(w/m2)": ("srad_w_m2", "W/m2"), "swe(mm)": ("swe_mm", "mm"),
    "tmax(c)": ("tmax_c", "degC"), "tmin(c)": ("tmin_c", "degC"), "vp(pa)": ("vp_pa", "Pa"),
}
FORCING_UNITS = dict(FORCING_COLUMNS.values())
DATE_PARTS = ("year", "month", "day")
STREAMFLOW_FIELDS = ["gauge_id", *DATE_PARTS, "qobs_cfs", "qobs_flag"]
_INTEGER = re.compile(r"[+-]?[0-9]+")
_BLANK = " \t"
_FIELD_SPLIT = re.compile(r"[ \t]+")
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class ForcingHeader:
    """The three numbers at the top of a forcing file."""

    lat_deg: float
    elev_m: float
    area_m2: float


def forcing_header(path: Path, head: list[str]) -> tuple[ForcingHeader, list[str]]:
    """Check a forcing file's first four lines: the header numbers and the column names."""
    if len(head) < 4:
        raise RawFormatError(path, len(head) + 1, "file is empty" if not head else (
            f"file ends after {len(head)} line(s); expected 3 header lines (latitude, elevation,"
            " area) and a column header"))
    numbers = []
    for number, what in enumerate(("latitude", "elevation", "basin area"), 1):
        tokens = head[number - 1].split()
        numbers.append(finite_float(tokens[0]) if len(tokens) == 1 else None)
        if numbers[-1] is None or (number == 3 and numbers[-1] <= 0):
            kind = "one positive number" if number == 3 else "one number"
            found = head[number - 1].strip()[:60]
            raise RawFormatError(path, number, f"header line {number} must be the {what} as "
                                 f"{kind}, found {found!r}")
    return ForcingHeader(*numbers), forcing_names(path, head[3])


def forcing_names(path: Path, line: str) -> list[str]:
    """Column names from line 4 (`Year Mnth Day Hr` and the 7 variables, in the file's order)."""
    tokens = line.split()
    if tokens and finite_float(tokens[0]) is not None:
        raise RawFormatError(path, 4, "missing column header: line 4 is a data row, expected "
                             "'Year Mnth Day Hr' and 7 variables")
    if [token.lower() for token in tokens[:4]] != ["year", "mnth", "day", "hr"]:
        raise RawFormatError(path, 4, "column header must start with 'Year Mnth Day Hr', found "
                             f"{line.strip()[:60]!r}{delimiter_hint(line)}")
    names = ["year", "month", "day", "hr"]
    for token in tokens[4:]:
        known = FORCING_COLUMNS.get(token.lower())
        if known is None or known[0] in names:
            problem = "unknown" if known is None else "duplicated"
            raise RawFormatError(path, 4, f"{problem} column {token!r} in the column header")
        names.append(known[0])
    missing = [name for name in FORCING_UNITS if name not in names]
    if missing:
        raise RawFormatError(path, 4, f"missing column(s) {', '.join(missing)} in column header")
    return names


def parse_forcing_file(path: Path) -> tuple[pd.DataFrame, ForcingHeader]:
    """One forcing file: columns `date` and the 7 variables, sorted by date; and its header."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        head = [line for line in (handle.readline() for _ in range(4)) if line]
    header, names = forcing_header(path, head)
    variables = list(FORCING_UNITS)
    frame = parse_rows(path, 5, names, dict.fromkeys(names[:4], "int64"))
    values = frame[variables].to_numpy()
    if (values <= SENTINEL_MAX).any():
        row, col = np.argwhere(values <= SENTINEL_MAX)[0]
        problem = f"unexpected sentinel {values[row, col]:g} in column {variables[col]}"
        raise error_at_row(path, 5, row, problem + " (forcings are gap-free)")
    out = pd.DataFrame({name: frame[name].to_numpy() for name in variables})
    return with_dates(out, validated_dates(path, 5, frame)), header


def parse_streamflow_file(path: Path, basin: str) -> pd.DataFrame:
    """One streamflow file's rows, gauge id checked: `date`, `qobs_cfs`, `qobs_flag`, sorted by date."""
    kinds = {"gauge_id": "str", "qobs_flag": "str"} | dict.fromkeys(DATE_PARTS, "int64")
    frame = parse_rows(path, 1, STREAMFLOW_FIELDS, kinds)
    wrong = frame["gauge_id"].to_numpy(dtype=object) != basin
    if wrong.any():
        row = int(np.argmax(wrong))
        found = frame["gauge_id"].iloc[row]
        raise error_at_row(path, 1, row, f"gauge id {found!r} does not match the basin {basin}")
    out = pd.DataFrame({"qobs_cfs": frame["qobs_cfs"].to_numpy(dtype="float64"),
                        "qobs_flag": pd.array(frame["qobs_flag"].to_numpy(dtype=object), dtype="string")})
    return with_dates(out, validated_dates(path, 1, frame))


def parse_rows(path: Path, first_line: int, names: list[str], kinds: dict) -> pd.DataFrame:
    """Parse whitespace-separated rows with the C engine; on a problem, name the first bad line.

    `kinds` maps names to "int64" or "str"; the other columns are float64.
    """
    kinds = {name: kinds.get(name, "float64") for name in names}
    try:
        frame = pd.read_csv(path, sep=r"\s+", header=None, names=names, skiprows=first_line - 1,
                            dtype=kinds, keep_default_na=False, na_values=[], engine="c")
    except (ValueError, OverflowError):  # ParserError, EmptyDataError, UnicodeDecodeError; an int beyond int64
        frame = None
    if frame is not None and len(frame):
        floats = frame[[n for n in names if kinds[n] == "float64"]].to_numpy()
        texts = frame[[n for n in names if kinds[n] == "str"]]
        if np.isfinite(floats).all() and not (texts == "").any().any():
            return frame
    check_utf8(path)
    rows = data_lines(path, first_line)
    if not rows:
        raise RawFormatError(path, first_line, "file is empty" if first_line == 1 else "no rows")
    for number, line in rows:
        fields = _FIELD_SPLIT.split(line.strip(_BLANK))
        if len(fields) != len(names):
            problem = f"expected {len(names)} fields, found {len(fields)}{delimiter_hint(line)}"
            raise RawFormatError(path, number, problem)
        for name, field in zip(names, fields, strict=True):
            if kinds[name] == "float64" and finite_float(field) is None:
                raise RawFormatError(path, number, f"value {field!r} in {name} is not a number")
            if kinds[name] == "int64" and not _INTEGER.fullmatch(field):
                raise RawFormatError(path, number, f"value {field!r} in {name} is not an integer")
            if kinds[name] == "int64" and not -2**63 <= int(field) < 2**63:
                raise RawFormatError(path, number, f"value {field} in {name} is outside the 64-bit integer range")
    raise RawFormatError(path, None, "rows could not be parsed")


def check_utf8(path: Path) -> None:
    """Raise for the first line holding a byte sequence that is not UTF-8."""
    raw = path.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = len(_LINE_END.findall(raw[:error.start].decode("utf-8"))) + 1
        raise RawFormatError(path, line, f"not UTF-8 text (byte 0x{raw[error.start]:02x})") from error


def data_lines(path: Path, first_line: int) -> list[tuple[int, str]]:
    """(1-based line number, text) of the non-blank lines the parser turns into rows.

    As for the parser, only LF, CRLF and CR end a line and only spaces and tabs are blank (a
    no-break space or a form feed is a field's content).
    """
    lines = enumerate(_LINE_END.split(path.read_text(encoding="utf-8", errors="replace")), 1)
    return [(n, line) for n, line in lines if n >= first_line and line.strip(_BLANK)]


def error_at_row(path: Path, first_line: int, row: int, problem: str) -> RawFormatError:
    """The error for the `row`-th data row (0-based), located at its line in the file."""
    return RawFormatError(path, data_lines(path, first_line)[row][0], problem)


def validated_dates(path: Path, first_line: int, frame: pd.DataFrame) -> np.ndarray:
    """Validate the year/month/day columns into unique `datetime64[D]` values."""
    years, months, days = (frame[part].to_numpy(np.int64) for part in DATE_PARTS)
    dates, valid = calendar_dates(years, months, days)
    if not valid.all():
        row = int(np.argmin(valid))
        date = f"{years[row]:04d}-{months[row]:02d}-{days[row]:02d}"
        raise error_at_row(path, first_line, row, f"impossible date {date}")
    duplicated = pd.Series(dates).duplicated().to_numpy()
    if duplicated.any():
        row = int(np.argmax(duplicated))
        first = data_lines(path, first_line)[int(np.argmax(dates == dates[row]))][0]
        problem = f"duplicated date {dates[row]} (first at line {first})"
        raise error_at_row(path, first_line, row, problem)
    return dates


def with_dates(frame: pd.DataFrame, dates: np.ndarray) -> pd.DataFrame:
    """Insert `date` (Arrow date32) first and sort the rows by it."""
    frame.insert(0, "date", pd.arrays.ArrowExtensionArray(pa.array(dates, type=pa.date32())))
    if not (np.diff(dates.astype(np.int64)) > 0).all():
        frame = frame.iloc[np.argsort(dates, kind="stable")].reset_index(drop=True)
    return frame
