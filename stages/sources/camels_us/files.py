"""Find each CAMELS-US basin's forcing and streamflow files and read what the forcing header says.

The header is the first four lines of a forcing file: latitude [deg], elevation [m] and basin area
[m2], one number a line, then the column names. It is read for every basin before any row is, so
the attributes table (which carries the three numbers) does not wait for the rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from stages.tables import RawFormatError, finite_float

GAUGE_ID = re.compile(r"\d{8}")
LINE_END = re.compile(rb"\r\n|\r|\n")  # as Python's universal newlines
FORCING_COLUMNS = {  # lower-cased raw name -> (column, unit)
    "dayl(s)": ("dayl_s", "s"), "prcp(mm/day)": ("prcp_mm_d", "mm/d"),
    "srad(w/m2)": ("srad_w_m2", "W/m2"), "swe(mm)": ("swe_mm", "mm"),
    "tmax(c)": ("tmax_c", "degC"), "tmin(c)": ("tmin_c", "degC"), "vp(pa)": ("vp_pa", "Pa"),
}
FORCING_UNITS = dict(FORCING_COLUMNS.values())
DATE_PARTS = ("year", "month", "day")


@dataclass(frozen=True)
class ForcingHeader:
    """The three numbers at the top of a forcing file."""

    lat_deg: float
    elev_m: float
    area_m2: float


@dataclass(frozen=True)
class Basin:
    """A gauge's two files and its forcing header, or the error met finding or reading them."""

    gauge_id: str
    forcing: Path | None = None
    streamflow: Path | None = None
    header: ForcingHeader | None = None
    error: RawFormatError | None = None


def find_basins(raw_dir: Path, product: str) -> tuple[list[Basin], list[RawFormatError]]:
    """Every gauge with a forcing file of `product`, sorted; and the problems of the folder itself."""
    folder, flow_folder = raw_dir / "basin_mean_forcing" / product, raw_dir / "usgs_streamflow"
    forcing: dict[str, list[Path]] = {}
    problems = []
    for path in sorted(folder.glob("**/*_forcing_leap.txt")):
        gauge = path.name.split("_", 1)[0]
        if GAUGE_ID.fullmatch(gauge):
            forcing.setdefault(gauge, []).append(path)
        else:
            problems.append(RawFormatError(path, None, "file name does not start with a gauge id"))
    if not forcing and not problems:
        problems.append(RawFormatError(folder, None, "no forcing files for this product"))
    flows: dict[str, list[Path]] = {}
    for path in sorted(flow_folder.glob("**/*_streamflow_qc.txt")):
        flows.setdefault(path.name.removesuffix("_streamflow_qc.txt"), []).append(path)
    basins = []
    for gauge in sorted(forcing):
        try:
            path = one_file(folder, f"**/{gauge}_*_forcing_leap.txt", forcing[gauge])
            flow = one_file(flow_folder, f"**/{gauge}_streamflow_qc.txt", flows.get(gauge, []))
            header, _, _ = forcing_head(path, _head_bytes(path))
            basins.append(Basin(gauge, path, flow, header))
        except RawFormatError as error:
            basins.append(Basin(gauge, error=error))
    return basins, problems


def one_file(folder: Path, pattern: str, matches: list[Path] | None = None) -> Path:
    """The one file of `folder` matching `pattern` (`matches`: found already); else an error naming both."""
    matches = sorted(folder.glob(pattern)) if matches is None else matches
    if len(matches) != 1:
        found = ", ".join(str(m) for m in matches) if matches else "none"
        raise RawFormatError(folder / pattern, None, f"expected one matching file, found {found}")
    return matches[0]


def forcing_head(path: Path, data: bytes) -> tuple[ForcingHeader, list[str], int]:
    """A forcing file's header numbers and column names, and the offset of its rows (what follows line 4)."""
    ends = list(islice(LINE_END.finditer(data), 4))
    starts = [0, *(end.end() for end in ends)]
    lines = [data[start:end.start()].decode("utf-8", errors="replace")
             for start, end in zip(starts, ends, strict=False)]
    rows_at = starts[-1]
    if len(ends) < 4:
        if data[rows_at:]:  # a last line without a line end
            lines.append(data[rows_at:].decode("utf-8", errors="replace"))
        rows_at = len(data)
    if len(lines) < 4:
        raise RawFormatError(path, len(lines) + 1, "file is empty" if not lines else (
            f"file ends after {len(lines)} line(s); expected 3 header lines (latitude, elevation,"
            " area) and a column header"))
    numbers = []
    for number, what in enumerate(("latitude", "elevation", "basin area"), 1):
        tokens = lines[number - 1].split()
        numbers.append(finite_float(tokens[0]) if len(tokens) == 1 else None)
        if numbers[-1] is None or (number == 3 and numbers[-1] <= 0):
            kind = "one positive number" if number == 3 else "one number"
            raise RawFormatError(path, number, f"header line {number} must be the {what} as {kind},"
                                 f" found {lines[number - 1].strip()[:60]!r}")
    return ForcingHeader(*numbers), column_names(path, lines[3]), rows_at


def column_names(path: Path, line: str) -> list[str]:
    """Column names from line 4 (`Year Mnth Day Hr` and the 7 variables, in the file's order)."""
    tokens = line.split()
    if tokens and finite_float(tokens[0]) is not None:
        raise RawFormatError(path, 4, "missing column header: line 4 is a data row, expected "
                             "'Year Mnth Day Hr' and 7 variables")
    if [token.lower() for token in tokens[:4]] != ["year", "mnth", "day", "hr"]:
        raise RawFormatError(path, 4, "column header must start with 'Year Mnth Day Hr', found "
                             f"{line.strip()[:60]!r}{delimiter_hint(line)}")
    names = [*DATE_PARTS, "hr"]
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


def _head_bytes(path: Path, size: int = 4096) -> bytes:
    """The start of a file, holding its first four lines and their line ends (the whole file if need be)."""
    with path.open("rb") as handle:
        data = handle.read(size)
        if len(data) == size and len(LINE_END.findall(data)) < 5:  # a 5th end: the 4th (maybe CR, LF) is whole
            data += handle.read()
    return data


def delimiter_hint(line: str) -> str:
    """A hint when a line that should be whitespace-separated uses `,` or `;`."""
    found = [d for d in (",", ";") if d in line]
    return f" (fields must be separated by whitespace, found {found[0]!r})" if found else ""
