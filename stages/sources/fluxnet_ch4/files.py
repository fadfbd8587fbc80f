"""Finding FLUXNET-CH4 / AmeriFlux BASE files under a raw folder, and the site metadata table.

File names are matched case-insensitively anywhere below the raw folder (the per-site zips unpack
to `FLX_<SITE>_FLUXNET-CH4_<Y1>-<Y2>_1-1/`, but re-hosted copies use other folders and spell the
site code in other cases). A site is identified by its code compared case-insensitively.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stages.tables import RawFormatError

FLUXNET_CH4 = "FLUXNET-CH4"
AMERIFLUX_BASE = "AmeriFlux BASE"
_SITE = r"(?P<site>[A-Z]{2}-[A-Z0-9]{3})"
_FLX = re.compile(_SITE.join(["FLX_", r"_FLUXNET-CH4_(?P<kind>[A-Z]{2})_(?P<y1>\d{4})-(?P<y2>\d{4})"
                                      r"_(?P<version>\d+-\d+)\.csv"]), re.IGNORECASE)
_AMF = re.compile(_SITE.join(["AMF_", r"_BASE_(?P<kind>HH|HR)_(?P<version>\d+-\d+)\.csv"]),
                  re.IGNORECASE)
_META = re.compile(r"FLX_AA-Flx_CH4-META_.*\.csv", re.IGNORECASE)
_LOOKS_FLX = re.compile(r"FLX_.*FLUXNET-CH4.*", re.IGNORECASE)
_LOOKS_AMF = re.compile(r"AMF_.*_BASE_.*", re.IGNORECASE)
SITE_ID = re.compile(r"[A-Za-z]{2}-[A-Za-z0-9]{3}")
METADATA_COLUMNS = {  # META column -> (output column, unit); other META columns are not read
    "SITE_NAME": ("site_name", "1"), "COUNTRY": ("country", "1"), "LAT": ("lat_deg", "deg"),
    "LON": ("lon_deg", "deg"), "IGBP": ("igbp", "1"),
    "SITE_CLASSIFICATION": ("site_classification", "1"), "UTC_OFFSET": ("utc_offset_h", "h"),
    "SOIL_TEMP_PROBE_DEPTHS": ("soil_temp_probe_depths", "1"),
}
METADATA_UNITS = dict(METADATA_COLUMNS.values())
_RANGES = {"LAT": (-90.0, 90.0), "LON": (-180.0, 180.0), "UTC_OFFSET": (-12.0, 14.0)}
_MISSING = frozenset({"", "NA", "-9999"})


@dataclass(frozen=True)
class DataFile:
    """One data file and what its name says."""

    path: Path
    site: str  # as spelled in the file name
    product: str  # FLUXNET_CH4 or AMERIFLUX_BASE
    kind: str  # DD, HH or HR
    version: str  # product version, e.g. "1-1"
    years: tuple[int, int] | None  # first and last year named in the file name (FLUXNET-CH4)


@dataclass(frozen=True)
class SiteFiles:
    """The daily and the sub-daily file of one site (either may be absent)."""

    site: str  # spelling from the daily file name, else from the sub-daily one
    daily: DataFile | None
    subdaily: DataFile | None


def find_site_files(raw_dir: Path) -> tuple[dict[str, SiteFiles], list[RawFormatError]]:
    """Site files keyed by case-folded site code, and the errors for names that break the rules.

    Aggregates other than daily (`_WW_`, `_MM_`, `_YY_`) are skipped. A file whose name looks like
    a FLUXNET-CH4 or AmeriFlux BASE file but does not follow the pattern, a file naming its last
    year before its first, and a second daily or sub-daily file for the same site are errors; the
    first file (in path order) of a site is kept.
    """
    errors: list[RawFormatError] = []
    slots: dict[tuple[str, str], DataFile] = {}
    for path in sorted(p for p in raw_dir.rglob("*") if p.suffix.lower() == ".csv" and p.is_file()):
        found = _classify(path, errors)
        if found is None:
            continue
        slot = (found.site.casefold(), "daily" if found.kind == "DD" else "subdaily")
        if slot in slots:
            errors.append(RawFormatError(path, None, f"a second {slot[1]} file for site {found.site}"
                                         f" (already read {slots[slot].path})"))
            continue
        slots[slot] = found
    sites = {}
    for key in sorted({key for key, _ in slots}):
        daily, subdaily = slots.get((key, "daily")), slots.get((key, "subdaily"))
        sites[key] = SiteFiles((daily or subdaily).site, daily, subdaily)
    return sites, errors


def find_metadata_file(raw_dir: Path) -> Path | None:
    """The `FLX_AA-Flx_CH4-META_*.csv` site table, None if absent; several are an error."""
    found = sorted(p for p in raw_dir.rglob("*") if _META.fullmatch(p.name) and p.is_file())
    if len(found) > 1:
        raise RawFormatError(found[1], None, f"several site metadata files (also {found[0]}); keep one")
    return found[0] if found else None


def read_site_metadata(raw_dir: Path) -> pd.DataFrame | None:
    """The site metadata table (`site_id` + `METADATA_UNITS` columns), None without a META file.

    Missing values (`""`, `NA`, `-9999`) become null; latitude, longitude and the UTC offset
    (hours, local standard time minus UTC) are range-checked. Site codes are unique ignoring case.
    """
    path = find_metadata_file(raw_dir)
    if path is None:
        return None
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or "SITE_ID" not in header:
            problem = "file is empty" if header is None else f"no SITE_ID column in {header[:4]}"
            raise RawFormatError(path, 1, problem)
        rows: list[dict[str, object]] = []
        seen: dict[str, int] = {}
        for fields in reader:
            if not any(field.strip() for field in fields):
                continue
            rows.append(_metadata_row(path, reader.line_num, header, fields, seen))
    frame = pd.DataFrame(rows, columns=["site_id", *METADATA_UNITS])
    types = {c: "float64" if unit in ("deg", "h") else "string" for c, unit in METADATA_UNITS.items()}
    return frame.astype({"site_id": "string"} | types).sort_values("site_id", ignore_index=True)


def _metadata_row(path: Path, line: int, header: list[str], fields: list[str],
                  seen: dict[str, int]) -> dict[str, object]:
    if len(fields) != len(header):
        raise RawFormatError(path, line, f"expected {len(header)} fields, found {len(fields)}")
    record = dict(zip(header, (field.strip() for field in fields), strict=True))
    site = record["SITE_ID"]
    if not SITE_ID.fullmatch(site):
        raise RawFormatError(path, line, f"SITE_ID {site!r} is not a site code like US-Myb")
    if site.casefold() in seen:
        raise RawFormatError(path, line, f"duplicated SITE_ID {site} (first at line {seen[site.casefold()]})")
    seen[site.casefold()] = line
    row: dict[str, object] = {"site_id": site}
    for raw, (column, unit) in METADATA_COLUMNS.items():
        text = record.get(raw, "")
        if text in _MISSING or unit not in ("deg", "h"):
            row[column] = None if text in _MISSING else text
            continue
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        low, high = _RANGES[raw]
        if not low <= value <= high:
            raise RawFormatError(path, line, f"{raw} {text!r} is not a number in [{low:g}, {high:g}]")
        row[column] = value
    return row


def _classify(path: Path, errors: list[RawFormatError]) -> DataFile | None:
    name = path.name
    if _META.fullmatch(name):
        return None
    flx, amf = _FLX.fullmatch(name), _AMF.fullmatch(name)
    if flx:
        years = int(flx["y1"]), int(flx["y2"])
        if years[1] < years[0]:
            errors.append(RawFormatError(path, None, f"file name names years {years[0]}-{years[1]}"))
            return None
        if flx["kind"].upper() not in ("DD", "HH", "HR"):
            return None  # weekly/monthly/yearly aggregates (WW, MM, YY) are not read
        return DataFile(path, flx["site"], FLUXNET_CH4, flx["kind"].upper(), flx["version"], years)
    if amf:
        return DataFile(path, amf["site"], AMERIFLUX_BASE, amf["kind"].upper(), amf["version"], None)
    if _LOOKS_FLX.fullmatch(name):
        errors.append(RawFormatError(path, None, "file name does not follow "
                                     "FLX_<SITE>_FLUXNET-CH4_<DD|HH>_<Y1>-<Y2>_<version>.csv"))
    elif _LOOKS_AMF.fullmatch(name):
        errors.append(RawFormatError(path, None, "file name does not follow "
                                     "AMF_<SITE>_BASE_<HH|HR>_<version>.csv"))
    return None
