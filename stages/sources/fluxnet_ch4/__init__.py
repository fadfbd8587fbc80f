"""FLUXNET-CH4 Community Product v1.0 source adapter (and AmeriFlux BASE half-hourly files).

Raw layout under ``raw_dir`` (file names matched case-insensitively, in any sub-folder)::

    FLX_<SITE>_FLUXNET-CH4_<Y1>-<Y2>_1-1/FLX_<SITE>_FLUXNET-CH4_DD_<Y1>-<Y2>_1-1.csv   daily
    FLX_<SITE>_FLUXNET-CH4_<Y1>-<Y2>_1-1/FLX_<SITE>_FLUXNET-CH4_HH_<Y1>-<Y2>_1-1.csv   sub-daily
    AMF_<SITE>_BASE_<HH|HR>_<version>.csv      AmeriFlux BASE sub-daily (2 `#` comment lines)
    FLX_AA-Flx_CH4-META_<stamp>.csv            optional site table (SITE_ID, LAT, LON, UTC_OFFSET...)

Files are comma-separated with one header row; `TIMESTAMP` is `YYYYMMDD`, `TIMESTAMP_START` /
`TIMESTAMP_END` are `YYYYMMDDHHMM` in local standard time; `-9999` (any numeric form) is missing.
FLUXNET-CH4 `_HH_` files hold half-hourly or, for some sites, hourly rows: the step is taken from
the rows (30 or 60 min); the `halfhourly` table holds both, `sites.subdaily_step_min` says
which. Columns are selected by name (see `columns`); measured `X`,
gap-filled `X_F`, ANN gap-filled `X_F_ANNOPTLM` and flag `X_QC` columns stay distinct.

Time: `daily.date` is the local-standard-time day. With `time_reference="utc"` (default) sub-daily
`timestamp_start`/`timestamp_end` are tz-aware UTC, converted with the site's UTC offset from
`params.utc_offsets_h` (first) or the META file's `UTC_OFFSET`; a sub-daily file of a site without
a known offset is an error. With `time_reference="local_standard"` they stay naive local standard
time (unit "local standard time"). `unknown_columns="keep"` keeps a variable whose base name is not
in the vocabulary (lower-cased, unit "unknown"); "raise" makes it an error.

Non-finite values: published `_DD_` (and `_HH_`) files carry the tokens `inf` / `-inf` in derived
columns (e.g. `RECO_NT`, `GPP_NT`). They are values the product ships, not a broken file: each one
(and any `nan`, in any case, or a literal too large for float64) becomes null like `-9999`, and
the `quarantine` table gets one row per file and column with the count (`line` -1, `column` the
raw name, `problem` "non-finite value (inf/-inf/nan) in column <name> set to null"), whatever
`on_error` says. The file and its site are kept; in a `_QC` flag column such a value is a missing
flag, and in an ANN gap-filled column it does not count as the forbidden -9999.

How a file flows (one pass, each step once, in this order): `files` finds the data files and the
site table and `read` orders them (sites by code, the daily file first); `parse` reads a file's
header once, while planning, and its rows with Arrow; `check` applies the format's rules, naming
the first failing line; `assemble` turns it into an Arrow table for the writer. Daily files are
read first and stacked whole; sub-daily files are read one at a time as the writer takes their
rows, cut into row groups.

Data: Delwiche, K. B. et al. (2021), ESSD 13, 3607-3689, doi:10.5194/essd-13-3607-2021;
Knox, S. H. et al. (2019), BAMS 100, 2607-2632, doi:10.1175/BAMS-D-18-0268.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, field_validator

from stages.sources.fluxnet_ch4 import assemble, parse
from stages.sources.fluxnet_ch4.files import METADATA_UNITS, SITE_ID, DataFile, find_site_files, read_site_metadata
from stages.sources.fluxnet_ch4.scan import (
    TIME_COLUMNS,
    Kind,
    Scan,
    declared_columns,
    plan,
    read_daily_file,
    read_subdaily_file,
)
from stages.tables import LiveChunks, RawFormatError, StreamedTables, Table, TableStream, quarantine_table

__all__ = ["CITATION", "LICENSE", "Params", "RawFormatError", "read", "read_daily", "read_daily_file",
           "read_halfhourly", "read_subdaily_file"]

CITATION = (
    "Delwiche, K. B. et al. (2021): FLUXNET-CH4: a global, multi-ecosystem dataset and analysis of"
    " methane seasonality from freshwater wetlands, ESSD 13, 3607-3689,"
    " doi:10.5194/essd-13-3607-2021; Knox, S. H. et al. (2019): FLUXNET-CH4 synthesis activity,"
    " BAMS 100, 2607-2632, doi:10.1175/BAMS-D-18-0268.1"
)
LICENSE = "CC-BY-4.0 (FLUXNET-CH4 data policy CCBY4.0; cite each site's DOI when publishing)"
UnknownColumns = Literal["keep", "raise"]
TIME_NAMES = {"daily": ("date",), "subdaily": ("timestamp_start", "timestamp_end")}
TIME_UNITS = {"utc": "UTC", "local_standard": "local standard time"}
SITE_UNITS = {
    "product": "1", "product_version": "1", "first_date": "local standard date",
    "last_date": "local standard date", "n_days": "d", "subdaily_step_min": "min", "n_subdaily": "1",
} | METADATA_UNITS


class Params(BaseModel):
    """Parameters of `ingest@fluxnet_ch4`."""

    model_config = ConfigDict(extra="forbid")
    on_error: Literal["raise", "quarantine"] = "raise"
    time_reference: Literal["utc", "local_standard"] = "utc"
    utc_offsets_h: dict[str, float] = {}
    unknown_columns: UnknownColumns = "keep"

    @field_validator("utc_offsets_h")
    @classmethod
    def _offsets_are_site_hours(cls, offsets: dict[str, float]) -> dict[str, float]:
        for site, hours in offsets.items():
            if not SITE_ID.fullmatch(site) or not -12 <= hours <= 14:
                raise ValueError(f"utc_offsets_h: {site!r}: {hours}: expected a site code and hours"
                                 " in [-12, 14]")
        return offsets


def read(raw_dir: Path, params: Params) -> Iterator[Table | StreamedTables]:
    """Yield the `halfhourly` (streamed), `daily`, `sites` and `quarantine` tables.

    With `on_error="quarantine"` a bad file is left out (its site keeps its other file) and its
    error goes to the quarantine table; with "raise" the error raised is the one a read of the
    files one by one in named order meets first. Errors in the site metadata file always
    propagate, before anything is yielded.
    """
    files, errors = find_site_files(raw_dir)
    if errors and params.on_error == "raise":
        raise errors[0]
    metadata = read_site_metadata(raw_dir)
    known = {} if metadata is None else {s.casefold(): s for s in metadata["site_id"]}
    offsets = _offsets(metadata, params)
    utc = params.time_reference == "utc"
    jobs = plan(files, {key: known.get(key, site.site) for key, site in files.items()}, offsets, utc)
    scan = Scan(jobs, params.on_error == "raise", params.unknown_columns, errors)
    daily = [(job.site_id, series) for job, series in scan.passing("daily")]
    columns = declared_columns(jobs, params.unknown_columns)
    tables = (assemble.site_table(job.site_id, series, columns) for job, series in scan.passing("subdaily"))
    chunks = LiveChunks(({"halfhourly": batch} for batch in assemble.row_groups(tables)), "halfhourly")
    template = assemble.to_pandas(assemble.empty_table(TIME_NAMES["subdaily"], columns, utc))
    time_unit = TIME_UNITS[params.time_reference]
    units = {column: unit for column, (unit, _) in columns.items()} | dict.fromkeys(TIME_NAMES["subdaily"], time_unit)
    yield StreamedTables((TableStream("halfhourly", template, ("site_id", "timestamp_start"), units),), chunks)
    chunks.close()  # a consumer that leaves the stream early: the files it did not take are read below
    for _ in scan.passing("subdaily"):
        pass
    frame, units = assemble.stack(daily, TIME_NAMES["daily"], utc=False)
    yield Table("daily", frame, ("site_id", "date"), units | {"date": "local standard date"})
    yield _sites_table(files, known, scan, metadata, offsets, time_unit)
    yield quarantine_table(errors, scan.nonfinite)


def read_daily(raw_dir: Path, site: str, unknown_columns: UnknownColumns = "keep") -> pd.DataFrame:
    """One site's daily (`_DD_`) file: `date` and the renamed variables, sorted by date."""
    found = _site_file(raw_dir, site, "daily")
    series = read_daily_file(found, parse.read_header(found.path, TIME_COLUMNS["daily"]), unknown_columns)
    return assemble.stack([("", series)], TIME_NAMES["daily"], utc=False, with_site_id=False)[0]


def read_halfhourly(raw_dir: Path, site: str, utc_offset_h: float | None = None,
                    unknown_columns: UnknownColumns = "keep") -> pd.DataFrame:
    """One site's sub-daily file (FLUXNET-CH4 `_HH_` or AmeriFlux BASE), sorted by time.

    `timestamp_start`/`timestamp_end` are UTC when `utc_offset_h` (local standard time minus UTC,
    in hours) is given, naive local standard time otherwise.
    """
    found = _site_file(raw_dir, site, "subdaily")
    header = parse.read_header(found.path, TIME_COLUMNS["subdaily"])
    series = read_subdaily_file(found, header, utc_offset_h, unknown_columns)
    return assemble.stack([("", series)], TIME_NAMES["subdaily"], utc_offset_h is not None, with_site_id=False)[0]


def _site_file(raw_dir: Path, site: str, kind: Kind) -> DataFile:
    files, errors = find_site_files(raw_dir)
    if site.casefold() not in files:
        names = [str(error) for error in errors][:3]
        raise RawFormatError(raw_dir, None, f"no files for site {site}" + (f"; {names}" if names else ""))
    found = getattr(files[site.casefold()], kind)
    if found is None:
        what = "FLUXNET-CH4 daily (DD)" if kind == "daily" else "half-hourly (HH/HR)"
        raise RawFormatError(raw_dir, None, f"no {what} file for site {site}")
    return found


def _offsets(metadata: pd.DataFrame | None, params: Params) -> dict[str, float]:
    offsets: dict[str, float] = {}
    if metadata is not None:
        known = metadata.dropna(subset=["utc_offset_h"])
        offsets = dict(zip(known["site_id"].str.casefold(), known["utc_offset_h"], strict=True))
    return offsets | {site.casefold(): hours for site, hours in params.utc_offsets_h.items()}


def _sites_table(files: dict, known: dict[str, str], scan: Scan, metadata: pd.DataFrame | None,
                 offsets: dict[str, float], time_unit: str) -> Table:
    """One row per site with data: products, record span and resolution, metadata."""
    rows = []
    for key, site in files.items():
        site_id = known.get(key, site.site)
        day, sub = scan.spans["daily"].get(site_id), scan.spans["subdaily"].get(site_id)
        if day is None and sub is None:
            continue
        used = [f for f, s in ((site.daily, day), (site.subdaily, sub)) if f is not None and s is not None]
        rows.append({
            "site_id": site_id,
            "product": " + ".join(sorted({f.product for f in used})),
            "product_version": " + ".join(sorted({f.version for f in used})),
            "first_date": day.spans["date"][0] if day else None,
            "last_date": day.spans["date"][1] if day else None,
            "n_days": day.rows if day else None,
            "subdaily_step_min": sub.step_min if sub else None,
            "n_subdaily": sub.rows if sub else None,
            "first_timestamp_start": sub.spans["timestamp_start"][0] if sub else None,
            "last_timestamp_end": sub.spans["timestamp_end"][1] if sub else None,
            "utc_offset_h": offsets.get(key),
        })
    return Table("sites", assemble.sites_frame(rows, metadata, time_unit == "UTC"), ("site_id",),
                 SITE_UNITS | dict.fromkeys(("first_timestamp_start", "last_timestamp_end"), time_unit))
