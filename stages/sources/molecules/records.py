"""Split SDF, MOL and SMILES files into numbered records and parse each with RDKit.

Each reader yields, in file order, either a `Record` (an RDKit molecule, sanitized, explicit
hydrogens kept, with the record's title/name and raw SDF data items) or the `RawFormatError` that
stops that one record from becoming data. The error names the file, the line where the problem
was found, and begins with ``record N:`` so the record stays identifiable. Records are numbered
from 1 in file order; in a SMILES file every line that is not a comment, the header or trailing
blank is a record. Line ends may be LF or CRLF; every line is decoded as strict UTF-8 and a line
that is not valid UTF-8 makes its record bad. RDKit's own words for a structure it refuses are the
reason: its log for a block it cannot parse, `Chem.DetectChemistryProblems` for one it can parse
but not sanitize (e.g. a 4-valent neutral nitrogen).
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rdkit import Chem, rdBase

from stages.tables import RawFormatError

TERMINATOR = b"$$$$"
SMILES_HEADERS = frozenset({"smiles", "smi", "canonical_smiles", "isomeric_smiles"})
_DATA_HEADER = re.compile(r"^>[^<]*<(?P<tag>[^<>]*)>")
_LOG_STAMP = re.compile(r"^\[\d\d:\d\d:\d\d\] ")


@dataclass(frozen=True)
class DataItem:
    """One SDF data item: its tag, its value (lines joined by newlines; None if empty), its line."""

    tag: str
    value: str | None
    line: int


@dataclass(frozen=True)
class Record:
    """One molecule read from a raw file, before descriptors are computed."""

    record: int
    line: int
    name: str | None
    mol: Chem.Mol
    items: tuple[DataItem, ...] = ()


Parsed = Record | RawFormatError


def read_sdf(path: Path) -> Iterator[Parsed]:
    """Yield every record of an SD file; each must end with a ``$$$$`` line."""
    yield from _read_molfiles(path, single=False)


def read_mol(path: Path) -> Iterator[Parsed]:
    """Yield the one record of a Molfile (a ``$$$$`` line, if present, must end the file)."""
    yield from _read_molfiles(path, single=True)


def read_smiles(path: Path) -> Iterator[Parsed]:
    """Yield the records of a SMILES file: ``SMILES<space or tab>name`` per line.

    Lines starting with ``#`` are comments; a first line whose first field is ``SMILES`` (any case)
    is a header. Blank lines after the last record are ignored; a blank line before it is an
    "empty SMILES line" error, as is a line whose SMILES field is empty.
    """
    lines = _split_lines(path)
    if not any(raw.strip() for raw in lines):
        yield RawFormatError(path, 1, "file is empty")
        return
    last = max(n for n, raw in enumerate(lines) if raw.strip())
    record, header_allowed = 0, True
    for index, raw in enumerate(lines[: last + 1]):
        number, text = index + 1, _decode(path, index + 1, raw, None)
        if isinstance(text, str) and text.lstrip().startswith("#"):
            continue
        if isinstance(text, str) and header_allowed and text.strip() and (
                text.split()[0].lower() in SMILES_HEADERS):
            header_allowed = False
            continue
        header_allowed, record = False, record + 1
        if isinstance(text, RawFormatError):
            yield RawFormatError(path, number, f"record {record}: {text.problem}")
        else:
            yield _parse_smiles_line(path, number, record, text)
    if record == 0:
        yield RawFormatError(path, None, "no SMILES records (only comments or a header)")


def _parse_smiles_line(path: Path, number: int, record: int, text: str) -> Parsed:
    if not text.strip() or text[0] in " \t":
        return RawFormatError(path, number, f"record {record}: empty SMILES line")
    fields = re.split(r"[ \t]+", text.strip(), maxsplit=1)
    smiles, name = fields[0], (fields[1].strip() if len(fields) > 1 else "") or None
    mol, reason = _parse(lambda sanitize: Chem.MolFromSmiles(smiles, sanitize=sanitize))
    if mol is None:
        hint = next((f" (fields must be separated by a space or tab, found {d!r})"
                     for d in (",", ";") if d in smiles), "")
        problem = f"record {record}: unparsable SMILES {smiles!r}: {reason}{hint}"
        return RawFormatError(path, number, problem)
    return Record(record, number, name, mol)


def _read_molfiles(path: Path, single: bool) -> Iterator[Parsed]:
    lines = _split_lines(path)
    if not any(raw.strip() for raw in lines):
        yield RawFormatError(path, 1, "file is empty")
        return
    last = max(n for n, raw in enumerate(lines) if raw.strip())
    start, record = 0, 0
    while start <= last:
        end = next((i for i in range(start, len(lines)) if lines[i].rstrip() == TERMINATOR), None)
        record += 1
        if single and record > 1:
            yield RawFormatError(path, start + 1, "a MOL file holds one molecule; found more after "
                                 f"the '$$$$' at line {start} (an SD file should be named .sdf)")
            return
        if end is None and not single:
            inside = "the molfile (no 'M  END')" if not any(
                raw.startswith(b"M  END") for raw in lines[start:]) else "the data items"
            yield RawFormatError(path, len(lines), f"record {record}: truncated, the file ends at "
                                 f"line {len(lines)} inside {inside}, without the closing '$$$$'")
            return
        block = lines[start:] if end is None else lines[start:end]
        yield _parse_molfile(path, start + 1, record, block)
        start = len(lines) if end is None else end + 1


def _parse_molfile(path: Path, first: int, record: int, raw_lines: list[bytes]) -> Parsed:
    """Parse one record's lines (without ``$$$$``): the Molfile, then its data items."""
    lines = []
    for offset, raw in enumerate(raw_lines):
        text = _decode(path, first + offset, raw, record)
        if isinstance(text, RawFormatError):
            return text
        lines.append(text)
    end = next((i for i, line in enumerate(lines) if line.startswith("M  END")), None)
    if end is None:
        last = first + max(len(lines) - 1, 0)
        return RawFormatError(path, last, f"record {record}: truncated, no 'M  END' line in the "
                              f"molfile starting at line {first}")
    counts = _check_counts(path, first, record, lines[: end + 1])
    if counts is not None:
        return counts
    items = _data_items(path, first + end + 1, record, lines[end + 1:])
    if isinstance(items, RawFormatError):
        return items
    block = "\n".join(lines[: end + 1]) + "\n"
    mol, reason = _parse(lambda sanitize: Chem.MolFromMolBlock(
        block, sanitize=sanitize, removeHs=False, strictParsing=True))
    if mol is None:
        return RawFormatError(path, first, f"record {record}: RDKit cannot read the molecule: {reason}")
    if mol.GetNumAtoms() == 0:
        return RawFormatError(path, first + 3, f"record {record}: the molecule has no atoms")
    return Record(record, first, lines[0].strip() or None, mol, items)


def _check_counts(path: Path, first: int, record: int, lines: list[str]) -> RawFormatError | None:
    """The counts line (4th) must start with the atom and bond counts and name a known version."""
    if len(lines) < 5:
        return RawFormatError(path, first + len(lines) - 1, f"record {record}: truncated, 'M  END' "
                              "comes before the three header lines and the counts line")
    line, number = lines[3], first + 3
    atoms, bonds = line[0:3].strip(), line[3:6].strip()
    for what, field in (("atom", atoms), ("bond", bonds)):
        if not field.isdigit():
            return RawFormatError(path, number, f"record {record}: counts line must start with the "
                                  f"{what} count, found {field!r} in {line.rstrip()[:40]!r}")
    version = line[34:].strip() if len(line) > 34 else ""
    if version and version not in ("V2000", "V3000"):
        return RawFormatError(path, number, f"record {record}: unknown molfile version {version!r}")
    return None


def _data_items(path: Path, first: int, record: int,
                lines: list[str]) -> tuple[DataItem, ...] | RawFormatError:
    """Parse ``> <TAG>`` (or ``>  <TAG>  (n)``) headers, their value lines and the blank after."""
    items: dict[str, DataItem] = {}
    index = 0
    while index < len(lines):
        line, number = lines[index], first + index
        if not line.strip():
            index += 1
            continue
        match = _DATA_HEADER.match(line)
        if not line.startswith(">") or match is None or not match["tag"].strip():
            return RawFormatError(path, number, f"record {record}: malformed data header "
                                  f"{line.rstrip()[:60]!r}, expected '> <TAG>'")
        tag = match["tag"].strip()
        if tag in items:
            return RawFormatError(path, number, f"record {record}: duplicated data item <{tag}> "
                                  f"(first at line {items[tag].line})")
        values = []
        index += 1
        while index < len(lines) and lines[index].strip():
            if _DATA_HEADER.match(lines[index]):  # RDKit would silently fold it into this value
                return RawFormatError(path, first + index, f"record {record}: data header "
                                      f"{lines[index].rstrip()[:60]!r} inside the value of <{tag}> "
                                      "(a blank line must end each value)")
            values.append(lines[index].rstrip())
            index += 1
        items[tag] = DataItem(tag, "\n".join(values) or None, number)
    return tuple(items.values())


def _parse(make: Callable[[bool], Chem.Mol | None]) -> tuple[Chem.Mol | None, str]:
    """Parse with sanitization; on failure, the reason from RDKit's log or chemistry checks.

    RDKit's log is sent to Python's stderr, captured, and sent back to the C++ streams (RDKit's
    default) afterwards, so messages about bad records never reach the console.
    """
    log = io.StringIO()
    rdBase.LogToPythonStderr()
    try:
        with contextlib.redirect_stderr(log):
            mol = make(True)
            raw = make(False) if mol is None else None
            problems = list(Chem.DetectChemistryProblems(raw)) if raw is not None else []
    finally:
        rdBase.LogToCppStreams()
    if mol is not None:
        return mol, ""
    reasons = [p.Message() for p in problems] or [
        _LOG_STAMP.sub("", line).strip() for line in log.getvalue().splitlines()]
    unique = list(dict.fromkeys(r for r in reasons if r))
    return None, "; ".join(unique) or "RDKit returned no molecule"


def _split_lines(path: Path) -> list[bytes]:
    """The file's lines without their LF or CRLF ends (and without a UTF-8 byte-order mark)."""
    data = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [line.removesuffix(b"\r") for line in lines]


def _decode(path: Path, number: int, raw: bytes, record: int | None) -> str | RawFormatError:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        where = f"record {record}: " if record is not None else ""
        return RawFormatError(path, number, f"{where}line is not valid UTF-8 (byte "
                              f"0x{raw[error.start]:02x} at column {error.start + 1})")

