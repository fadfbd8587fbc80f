"""CAMELS-US source adapter: basin-mean forcings, USGS streamflow and catchment attributes.

Raw layout under ``raw_dir`` (the official ``basin_dataset_public_v1p2`` plus
``camels_attributes_v2.0``; files may also be stored flat, without the HUC folders)::

    basin_mean_forcing/<product>/<huc02>/<gauge>_lump_<...>_forcing_leap.txt
    usgs_streamflow/<huc02>/<gauge>_streamflow_qc.txt
    camels_attributes_v2.0/camels_{clim,geol,hydro,name,soil,topo,vege}.txt

Forcing files hold 3 header lines (latitude [deg], elevation [m], basin area [m2]), a column
header (``Year Mnth Day Hr`` and 7 variables, names capitalised per product) and daily rows whose
fields are separated by spaces and/or tabs. Streamflow files hold ``gauge year month day Q flag``
rows, Q in cubic feet per second, ``-999.00 M`` on missing days. Attribute files are
``;``-separated with ``NA`` for missing values; ``gauge_id`` is an 8-character string.
Output `date` columns are pyarrow `date32` (pandas `ArrowDtype`), whose values are `datetime.date`.

Time series: Newman et al. (2015), doi:10.5194/hess-19-209-2015.
Attributes and their units: Addor et al. (2017), doi:10.5194/hess-21-5293-2017.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from stages.tables import RawFormatError, Table, calendar_dates, finite_float, quarantine_table

CITATION = (
    "Newman, A. J. et al. (2015): Development of a large-sample watershed-scale hydrometeorological"
    " dataset for the contiguous USA, HESS 19, 209-223, doi:10.5194/hess-19-209-2015; Addor, N. et"
    " al. (2017): The CAMELS data set: catchment attributes and meteorology for large-sample"
    " studies, HESS 21, 5293-5313, doi:10.5194/hess-21-5293-2017"
)
LICENSE = "UCAR/NCAR CAMELS terms: free use, citing both papers (redistributors list CC-BY-4.0)"
FT3_TO_M3 = 0.0283168
DATE_DTYPE = pd.ArrowDtype(pa.date32())
SENTINEL_MAX = -999.0  # forcings are gap-free, so a value this low is a missing-value code

_BY_UNIT = {  # Addor et al. (2017), Tables 1-4; the column gets the unit's suffix
    "deg": "gauge_lat gauge_lon",
    "m": "elev_mean soil_depth_pelletier soil_depth_statsgo max_water_content root_depth_50"
    " root_depth_99",
    "m/km": "slope_mean",
    "km2": "area_gages2 area_geospa_fabric",
    "mm/d": "p_mean pet_mean q_mean q5 q95",
    "d/yr": "high_prec_freq low_prec_freq high_q_freq low_q_freq",
    "d": "high_prec_dur low_prec_dur high_q_dur low_q_dur hfd_mean",
    "cm/h": "soil_conductivity",
    "%": "sand_frac silt_frac clay_frac water_frac organic_frac other_frac",
    "log10(m2)": "geol_permeability",
    "1": "huc_02 gauge_name p_seasonality frac_snow aridity high_prec_timing low_prec_timing"
    " runoff_ratio slope_fdc baseflow_index stream_elas zero_q_freq soil_porosity geol_1st_class"
    " glim_1st_class_frac geol_2nd_class glim_2nd_class_frac carbonate_rocks_frac frac_forest"
    " lai_max lai_diff gvf_max gvf_diff dom_land_cover_frac dom_land_cover",
}
_SUFFIX = {"1": "", "%": "_pct", "log10(m2)": "_log10_m2"}
ATTRIBUTES: dict[str, tuple[str, str]] = {
    name: (name + _SUFFIX.get(unit, "_" + unit.replace("/", "_")), unit)
    for unit, names in _BY_UNIT.items()
    for name in names.split()
} | {"geol_porostiy": ("geol_porosity", "1")}  # (sic) in the files; zero_q_freq is a fraction
STRING_ATTRIBUTES = frozenset(
    "huc_02 gauge_name high_prec_timing low_prec_timing geol_1st_class geol_2nd_class"
    " dom_land_cover".split()
)
ATTRIBUTE_GROUPS = ("name", "topo", "clim", "hydro", "soil", "geol", "vege")
REQUIRED_GROUPS = ("name", "topo")
HEADER_UNITS = {"header_lat_deg": "deg", "header_elev_m": "m", "header_area_m2": "m2"}
FORCING_COLUMNS = {  # lower-cased raw name -> (column, unit)
    "dayl(s)": ("dayl_s", "s"), "prcp(mm/day)": ("prcp_mm_d", "mm/d"),
    "srad(w/m2)": ("srad_w_m2", "W/m2"), "swe(mm)": ("swe_mm", "mm"),
    "tmax(c)": ("tmax_c", "degC"), "tmin(c)": ("tmin_c", "degC"), "vp(pa)": ("vp_pa", "Pa"),
}
FORCING_UNITS = dict(FORCING_COLUMNS.values())
STREAMFLOW_UNITS = {"qobs_cfs": "ft3/s", "qobs_mm_d": "mm/d", "qobs_flag": "1"}
_DATE_PARTS = ("year", "month", "day")
_GAUGE_ID = re.compile(r"\d{8}")
_INTEGER = re.compile(r"[+-]?\d+")


class Params(BaseModel):
    """Parameters of `ingest@camels_us`."""

    model_config = ConfigDict(extra="forbid")
    forcing: Literal["daymet", "maurer", "nldas", "maurer_extended"] = "daymet"
    on_error: Literal["raise", "quarantine"] = "raise"


@dataclass(frozen=True)
class ForcingHeader:
    """The three numbers at the top of a forcing file."""

    lat_deg: float
    elev_m: float
    area_m2: float


def read(raw_dir: Path, params: Params) -> Iterator[Table]:
    """Yield the `attributes`, `forcing`, `streamflow` and `quarantine` tables.

    Basins are the gauges with a forcing file for `params.forcing`. With `on_error="quarantine"`
    a basin whose forcing or streamflow file is bad is left out of both time-series tables and its
    error goes to the quarantine table; attribute-file errors always propagate.
    """
    attributes = read_attributes(raw_dir)
    errors: list[RawFormatError] = []
    forcings, flows, headers = {}, {}, {}
    for basin in _forcing_basins(raw_dir, params, errors):
        try:
            forcing, header = read_forcings(raw_dir, basin, params.forcing)
            flow = read_streamflow(raw_dir, basin, header.area_m2)
        except RawFormatError as error:
            if params.on_error == "raise":
                raise
            errors.append(error)
            continue
        forcings[basin], flows[basin], headers[basin] = forcing, flow, header
    rows = [(basin, h.lat_deg, h.elev_m, h.area_m2) for basin, h in headers.items()]
    header_frame = pd.DataFrame(rows, columns=["gauge_id", *HEADER_UNITS]).astype(
        {"gauge_id": "string"} | dict.fromkeys(HEADER_UNITS, "float64")
    )
    merged = attributes.merge(header_frame, on="gauge_id", how="outer")
    units = {new: unit for new, unit in ATTRIBUTES.values() if new in merged.columns}
    merged = merged.sort_values("gauge_id", ignore_index=True)
    yield Table("attributes", merged, keys=("gauge_id",), units=units | HEADER_UNITS)
    keys = ("gauge_id", "date")
    yield Table("forcing", _stack(forcings, FORCING_UNITS), keys, FORCING_UNITS)
    yield Table("streamflow", _stack(flows, STREAMFLOW_UNITS), keys, STREAMFLOW_UNITS)
    yield quarantine_table(errors)


def read_attributes(raw_dir: Path) -> pd.DataFrame:
    """Read and outer-join the attribute files on `gauge_id`, renamed per `ATTRIBUTES`."""
    merged = pd.DataFrame({"gauge_id": pd.array([], dtype="string")})
    for group in ATTRIBUTE_GROUPS:
        path = raw_dir / "camels_attributes_v2.0" / f"camels_{group}.txt"
        if not path.is_file():
            if group in REQUIRED_GROUPS:
                raise RawFormatError(path, None, "required attribute file is missing")
            continue
        frame = _read_attribute_file(path)
        clash = sorted(set(frame.columns[1:]) & set(merged.columns))
        if clash:
            raise RawFormatError(path, 1, f"column {clash[0]!r} also appears in another file")
        merged = merged.merge(frame, on="gauge_id", how="outer")
    return merged.sort_values("gauge_id", ignore_index=True)


def read_forcings(raw_dir: Path, basin: str, product: str) -> tuple[pd.DataFrame, ForcingHeader]:
    """Read one basin's forcing file: columns `date` and the 7 variables, sorted by date."""
    path = _find_one(raw_dir / "basin_mean_forcing" / product, f"**/{basin}_*_forcing_leap.txt")
    with path.open(encoding="utf-8", errors="replace") as handle:
        head = [line for line in (handle.readline() for _ in range(4)) if line]
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
    names = _forcing_names(path, head[3])
    variables = list(FORCING_UNITS)
    frame = _parse_rows(path, 5, names, dict.fromkeys(names[:4], "int64"))
    values = frame[variables].to_numpy()
    if (values <= SENTINEL_MAX).any():
        row, col = np.argwhere(values <= SENTINEL_MAX)[0]
        problem = f"unexpected sentinel {values[row, col]:g} in column {variables[col]}"
        raise _error_at_row(path, 5, row, problem + " (forcings are gap-free)")
    out = pd.DataFrame({name: frame[name].to_numpy() for name in variables})
    return _with_dates(out, _dates(path, 5, frame)), ForcingHeader(*numbers)


def read_streamflow(raw_dir: Path, basin: str, area_m2: float) -> pd.DataFrame:
    """Read one basin's USGS streamflow: `date`, `qobs_cfs`, `qobs_mm_d`, `qobs_flag`.

    Missing days (flag `M`, or any negative discharge such as `-999.00`) become null discharge;
    the flag is kept. mm/d uses the basin area from the forcing header, as neuralhydrology does.
    """
    if not area_m2 > 0:
        raise ValueError(f"basin area must be positive, got {area_m2}")
    path = _find_one(raw_dir / "usgs_streamflow", f"**/{basin}_streamflow_qc.txt")
    names = ["gauge_id", *_DATE_PARTS, "qobs_cfs", "qobs_flag"]
    kinds = {"gauge_id": "str", "qobs_flag": "str"} | dict.fromkeys(_DATE_PARTS, "int64")
    frame = _parse_rows(path, 1, names, kinds)
    wrong = frame["gauge_id"].to_numpy(dtype=object) != basin
    if wrong.any():
        row = int(np.argmax(wrong))
        found = frame["gauge_id"].iloc[row]
        raise _error_at_row(path, 1, row, f"gauge id {found!r} does not match the basin {basin}")
    flag = frame["qobs_flag"].to_numpy(dtype=object)
    cfs = frame["qobs_cfs"].to_numpy(dtype="float64").copy()
    cfs[(cfs < 0) | (flag == "M")] = np.nan
    out = pd.DataFrame({"qobs_cfs": cfs, "qobs_mm_d": cfs * FT3_TO_M3 * 86400 / area_m2 * 1000,
                        "qobs_flag": pd.array(flag, dtype="string")})
    return _with_dates(out, _dates(path, 1, frame))


def _forcing_basins(raw_dir: Path, params: Params, errors: list[RawFormatError]) -> list[str]:
    folder = raw_dir / "basin_mean_forcing" / params.forcing
    basins, problems = set(), []
    for path in sorted(folder.glob("**/*_forcing_leap.txt")):
        prefix = path.name.split("_", 1)[0]
        if _GAUGE_ID.fullmatch(prefix):
            basins.add(prefix)
        else:
            problems.append(RawFormatError(path, None, "file name does not start with a gauge id"))
    if not basins and not problems:
        problems.append(RawFormatError(folder, None, "no forcing files for this product"))
    if problems and params.on_error == "raise":
        raise problems[0]
    errors.extend(problems)
    return sorted(basins)


def _find_one(folder: Path, pattern: str) -> Path:
    matches = sorted(folder.glob(pattern))
    if len(matches) != 1:
        found = ", ".join(str(m) for m in matches) if matches else "none"
        raise RawFormatError(folder / pattern, None, f"expected one matching file, found {found}")
    return matches[0]


def _hint(line: str) -> str:
    found = [d for d in (",", ";") if d in line]
    return f" (fields must be separated by whitespace, found {found[0]!r})" if found else ""


def _forcing_names(path: Path, line: str) -> list[str]:
    tokens = line.split()
    if tokens and finite_float(tokens[0]) is not None:
        raise RawFormatError(path, 4, "missing column header: line 4 is a data row, expected "
                             "'Year Mnth Day Hr' and 7 variables")
    if [token.lower() for token in tokens[:4]] != ["year", "mnth", "day", "hr"]:
        raise RawFormatError(path, 4, "column header must start with 'Year Mnth Day Hr', found "
                             f"{line.strip()[:60]!r}{_hint(line)}")
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


def _read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def _parse_rows(path: Path, first_line: int, names: list[str], kinds: dict) -> pd.DataFrame:
    """Parse whitespace-separated rows with the C engine; on a problem, name the first bad line.

    `kinds` maps names to "int64" or "str"; the other columns are float64.
    """
    kinds = {name: kinds.get(name, "float64") for name in names}
    try:
        frame = pd.read_csv(path, sep=r"\s+", header=None, names=names, skiprows=first_line - 1,
                            dtype=kinds, keep_default_na=False, na_values=[], engine="c")
    except ValueError:  # ParserError, EmptyDataError and UnicodeDecodeError included
        frame = None
    if frame is not None and len(frame):
        floats = frame[[n for n in names if kinds[n] == "float64"]].to_numpy()
        texts = frame[[n for n in names if kinds[n] == "str"]]
        if np.isfinite(floats).all() and not (texts == "").any().any():
            return frame
    rows = _data_lines(path, first_line)
    if not rows:
        raise RawFormatError(path, first_line, "file is empty" if first_line == 1 else "no rows")
    for number, line in rows:
        fields = line.split()
        if len(fields) != len(names):
            problem = f"expected {len(names)} fields, found {len(fields)}{_hint(line)}"
            raise RawFormatError(path, number, problem)
        for name, field in zip(names, fields, strict=True):
            if kinds[name] == "float64" and finite_float(field) is None:
                raise RawFormatError(path, number, f"value {field!r} in {name} is not a number")
            if kinds[name] == "int64" and not _INTEGER.fullmatch(field):
                raise RawFormatError(path, number, f"value {field!r} in {name} is not an integer")
    raise RawFormatError(path, None, "rows could not be parsed")


def _data_lines(path: Path, first_line: int) -> list[tuple[int, str]]:
    """(1-based line number, text) of the non-blank lines the parser turns into rows."""
    lines = enumerate(_read_lines(path), 1)
    return [(n, line) for n, line in lines if n >= first_line and line.strip()]


def _error_at_row(path: Path, first_line: int, row: int, problem: str) -> RawFormatError:
    return RawFormatError(path, _data_lines(path, first_line)[row][0], problem)


def _dates(path: Path, first_line: int, frame: pd.DataFrame) -> np.ndarray:
    """Validate the year/month/day columns into unique `datetime64[D]` values."""
    years, months, days = (frame[part].to_numpy(np.int64) for part in _DATE_PARTS)
    dates, valid = calendar_dates(years, months, days)
    if not valid.all():
        row = int(np.argmin(valid))
        date = f"{years[row]:04d}-{months[row]:02d}-{days[row]:02d}"
        raise _error_at_row(path, first_line, row, f"impossible date {date}")
    duplicated = pd.Series(dates).duplicated().to_numpy()
    if duplicated.any():
        row = int(np.argmax(duplicated))
        first = _data_lines(path, first_line)[int(np.argmax(dates == dates[row]))][0]
        problem = f"duplicated date {dates[row]} (first at line {first})"
        raise _error_at_row(path, first_line, row, problem)
    return dates


def _with_dates(frame: pd.DataFrame, dates: np.ndarray) -> pd.DataFrame:
    frame.insert(0, "date", pd.arrays.ArrowExtensionArray(pa.array(dates, type=pa.date32())))
    if not (np.diff(dates.astype(np.int64)) > 0).all():
        frame = frame.iloc[np.argsort(dates, kind="stable")].reset_index(drop=True)
    return frame


def _stack(frames: dict[str, pd.DataFrame], units: dict[str, str]) -> pd.DataFrame:
    """Concatenate per-basin frames (basins sorted) behind a leading `gauge_id` column."""
    basins = sorted(frames)
    columns = {"date": pd.array([], dtype=DATE_DTYPE)} | {
        name: pd.array([], dtype="string" if name == "qobs_flag" else "float64") for name in units
    }
    parts = [frames[basin] for basin in basins] or [pd.DataFrame(columns)]
    stacked = pd.concat(parts, ignore_index=True)
    gauges = np.repeat(np.array(basins, dtype=str), [len(frames[basin]) for basin in basins])
    stacked.insert(0, "gauge_id", pd.array(gauges, dtype="string"))
    return stacked


def _read_attribute_file(path: Path) -> pd.DataFrame:
    lines, texts = _read_lines(path), STRING_ATTRIBUTES | {"gauge_id"}
    header = [name.strip() for name in lines[0].split(";")] if lines else [""]
    if header[0] != "gauge_id":
        problem = f"first column must be gauge_id, found {header[0]!r}{_hint(header[0])}"
        raise RawFormatError(path, 1, "file is empty" if not lines else problem)
    for index, name in enumerate(header[1:], 1):
        if name not in ATTRIBUTES or name in header[:index]:
            problem = "unknown" if name not in ATTRIBUTES else "duplicated"
            raise RawFormatError(path, 1, f"{problem} column {name!r}")
    columns: list[list[str | float | None]] = [[] for _ in header]
    first_seen: dict[str, int] = {}
    for number, line in enumerate(lines[1:], 2):
        fields = [field.strip() for field in line.split(";")]
        if not line.strip():
            continue
        if len(fields) != len(header):
            problem = f"expected {len(header)} ';'-separated fields, found {len(fields)}"
            raise RawFormatError(path, number, problem)
        if not _GAUGE_ID.fullmatch(fields[0]) or fields[0] in first_seen:
            problem = f"gauge_id {fields[0]!r} is not an 8-digit USGS id"
            if fields[0] in first_seen:
                problem = f"duplicated gauge_id {fields[0]} (first at line {first_seen[fields[0]]})"
            raise RawFormatError(path, number, problem)
        first_seen[fields[0]] = number
        for name, field, column in zip(header, fields, columns, strict=True):
            value = None if field == "NA" else field if name in texts else finite_float(field)
            if value is None and field != "NA":
                problem = "is empty" if field == "" else "is not a number"
                raise RawFormatError(path, number, f"value {field!r} in column {name} {problem}")
            column.append(value)
    names = [ATTRIBUTES.get(name, (name,))[0] for name in header]
    return pd.DataFrame({
        new: pd.array(column, dtype="string" if name in texts else "float64")
        for new, name, column in zip(names, header, columns, strict=True)
    })
