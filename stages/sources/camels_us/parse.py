"""Parse the rows of many CAMELS-US forcing or streamflow files in one call of Arrow's CSV reader.

The raw rows separate their fields by runs of spaces and tabs (streamflow right-aligns its
discharge) and end lines with LF, CRLF or CR; Arrow reads one delimiter. Each file's rows are
normalised to single spaces and LF first (`normalised`), then the files of a chunk are joined and
parsed together. Any text Arrow refuses, and any number that is not finite,
raises `Unreadable` without saying where: `check.explain_rows` finds the line, file by file.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from stages.sources.camels_us.files import DATE_PARTS, FORCING_UNITS, forcing_head

STREAMFLOW_KINDS = {"gauge_id": "text", "year": "int", "month": "int", "day": "int", "qobs_cfs": "float",
                    "qobs_flag": "text"}
TYPES = {"int": pa.int64(), "float": pa.float64(), "text": pa.string()}
_BLANKS = bytes.maketrans(b"\t\r", b" \n")
_SPACE, _NEWLINE = 32, 10
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Parsed:
    """The rows of some files, file after file, as Arrow read them; and the number of rows of each."""

    table: pa.Table
    counts: np.ndarray


class Unreadable(Exception):
    """Arrow could not read the rows of some file as numbers and text of the expected columns."""


def forcing_kinds(names: list[str]) -> dict[str, str]:
    """The kind of each column of a forcing file, in the file's order."""
    return {name: "float" if name in FORCING_UNITS else "int" for name in names}


def parse_forcings(paths: list[Path]) -> Parsed:
    """The rows of forcing files: `year`, `month`, `day` and the 7 variables, in file order."""
    files = []
    for path in paths:
        data = path.read_bytes()
        _, names, rows_at = forcing_head(path, data)
        files.append((tuple(names), *normalised(data, rows_at)))
    tables = [_arrow(forcing_kinds(list(names)), [text for _, text, _ in same])  # one call per column order
              for names, same in groupby(files, key=lambda file: file[0])]
    table = pa.concat_tables([t.select([*DATE_PARTS, *FORCING_UNITS]) for t in tables])
    return _parsed(table, [rows for _, _, rows in files])


def parse_streamflows(paths: list[Path]) -> Parsed:
    """The rows of streamflow files: gauge id, `year`, `month`, `day`, discharge in ft3/s and flag."""
    texts, rows = zip(*(normalised(path.read_bytes()) for path in paths), strict=True)
    return _parsed(_arrow(STREAMFLOW_KINDS, texts), rows)


def normalised(data: bytes, start: int = 0) -> tuple[bytes | memoryview, int]:
    """The rows from byte `start` on, one space between fields and a LF after each; and their number.

    Blank lines and a leading byte-order mark are dropped. Each file is normalised on its own: its
    text stays in the CPU's cache (a whole chunk at once, 18 MB of forcings, parsed 1.5x slower).
    """
    text = data.translate(_BLANKS)
    start += len(_BOM) if text.startswith(_BOM, start) else 0
    if len(text) == start:
        return b"", 0
    if not text.endswith(b"\n"):
        text += b"\n"
    a = np.frombuffer(text, np.uint8, offset=start)
    newline = a == _NEWLINE
    blank = (a == _SPACE) | newline
    if not blank[0] and not (blank[1:] & blank[:-1]).any():  # the usual forcing file: tab-separated
        return memoryview(text)[start:], int(np.count_nonzero(newline))
    a = a[~((a == _SPACE) & np.append(blank[1:], True))]  # a space before a space or a LF
    after_newline = np.insert(a[:-1] == _NEWLINE, 0, True)
    a = a[~(((a == _SPACE) | (a == _NEWLINE)) & after_newline)]  # blanks starting a line
    return a.tobytes(), int(np.count_nonzero(a == _NEWLINE))


def _arrow(kinds: dict[str, str], texts: list[bytes | memoryview]) -> pa.Table:
    """The texts' rows in one Arrow call."""
    joined = b"".join(texts)
    if _hexadecimal(joined, [i for i, kind in enumerate(kinds.values()) if kind == "int"]):
        raise Unreadable
    try:
        return pcsv.read_csv(
            io.BytesIO(joined),
            read_options=pcsv.ReadOptions(column_names=list(kinds), use_threads=True),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False),
            convert_options=pcsv.ConvertOptions(column_types={n: TYPES[k] for n, k in kinds.items()},
                                                null_values=[], strings_can_be_null=False))
    except pa.ArrowInvalid as error:
        raise Unreadable from error


def _hexadecimal(text: bytes, integers: list[int]) -> bool:
    """Whether an integer field is written `0x1F`: Arrow reads those, the format has none."""
    if b"x" not in text and b"X" not in text:  # one byte: a fast search
        return False
    for line in text.splitlines():
        fields = line.split(b" ")
        if any(fields[i][:2] in (b"0x", b"0X") for i in integers if i < len(fields)):
            return True
    return False


def _parsed(table: pa.Table, rows: list[int]) -> Parsed:
    """The table, one Arrow chunk a column; Unreadable if a file has no row or a number is not finite."""
    table = table.combine_chunks()
    counts = np.array(rows, dtype=np.int64)
    floats = [column.to_numpy() for column in table.columns if pa.types.is_floating(column.type)]
    if (counts == 0).any() or table.num_rows != counts.sum() or not all(np.isfinite(f).all() for f in floats):
        raise Unreadable
    return Parsed(table, counts)
