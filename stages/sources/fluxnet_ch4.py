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
which. Columns are selected by name (see `fluxnet_ch4_columns`); measured `X`,
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

Data: Delwiche, K. B. et al. (2021), ESSD 13, 3607-3689, doi:10.5194/essd-13-3607-2021;
Knox, S. H. et al. (2019), BAMS 100, 2607-2632, doi:10.1175/BAMS-D-18-0268.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, field_validator

from stages.sources import fluxnet_ch4_series as series
from stages.sources.fluxnet_ch4_files import (
    METADATA_UNITS,
    SITE_ID,
    SiteFiles,
    find_site_files,
    read_site_metadata,
)
from stages.sources.fluxnet_ch4_jobs import FileJob, FileScan, file_jobs
from stages.sources.fluxnet_ch4_stack import Stacker
from stages.sources.fluxnet_ch4_stream import halfhourly_stream
from stages.tables import NonFinite, RawFormatError, StreamedTables, Table, quarantine_table

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

    Every file is read once, in stacking order, as the half-hourly rows are written (see
    `fluxnet_ch4_stream`); daily rows are stacked on the way, and the tables that need every file
    come after the stream. With `on_error="quarantine"` a bad file is left out (its site keeps its
    other file) and its error goes to the quarantine table; errors in the site metadata file
    always propagate, before anything is yielded.
    """
    files, errors = find_site_files(raw_dir)
    if errors and params.on_error == "raise":
        raise errors[0]
    metadata = read_site_metadata(raw_dir)
    known = {} if metadata is None else {s.casefold(): s for s in metadata["site_id"]}
    offsets = _offsets(metadata, params)
    jobs = file_jobs(files, {key: known.get(key, site.site) for key, site in files.items()})
    daily = Stacker(TIME_NAMES["daily"], sum(job.size for job in jobs if job.kind == "daily"))
    read_one = partial(_read_file, offsets=offsets, params=params)
    scan = FileScan(jobs, read_one, daily, errors, raise_errors=params.on_error == "raise")
    time_unit = TIME_UNITS[params.time_reference]
    halfhourly = halfhourly_stream(scan, _declared_columns(jobs, offsets, params),
                                   params.time_reference == "utc", time_unit)
    yield halfhourly
    halfhourly.chunks.close()  # a consumer that left the stream early: stop its thread before reading on
    scan.finish()
    yield Table("daily", daily.frame(), ("site_id", "date"), daily.units | {"date": "local standard date"})
    yield _sites_table(files, known, scan.parsed["daily"], scan.parsed["subdaily"], metadata, offsets, time_unit)
    kept = [(job.found.path, scan.parsed[job.kind].get(job.site_id)) for job in jobs]
    yield quarantine_table(errors, [NonFinite(path, column, count) for path, series in kept if series is not None
                                    for column, count in series.nonfinite.items()])


def read_daily(raw_dir: Path, site: str, unknown_columns: UnknownColumns = "keep") -> pd.DataFrame:
    """One site's daily (`_DD_`) file: `date` and the renamed variables, sorted by date."""
    found = _site_files(raw_dir, site).daily
    if found is None:
        raise RawFormatError(raw_dir, None, f"no FLUXNET-CH4 daily (DD) file for site {site}")
    return _one_site(series.read_daily_file(found, unknown_columns), TIME_NAMES["daily"])


def read_halfhourly(raw_dir: Path, site: str, utc_offset_h: float | None = None,
                    unknown_columns: UnknownColumns = "keep") -> pd.DataFrame:
    """One site's sub-daily file (FLUXNET-CH4 `_HH_` or AmeriFlux BASE), sorted by time.

    `timestamp_start`/`timestamp_end` are UTC when `utc_offset_h` (local standard time minus UTC,
    in hours) is given, naive local standard time otherwise.
    """
    found = _site_files(raw_dir, site).subdaily
    if found is None:
        raise RawFormatError(raw_dir, None, f"no half-hourly (HH/HR) file for site {site}")
    parsed = series.read_subdaily_file(found, utc_offset_h, unknown_columns)
    return _one_site(parsed, TIME_NAMES["subdaily"])


def _one_site(parsed: series.SiteSeries, time_names: tuple[str, ...]) -> pd.DataFrame:
    stacker = Stacker(time_names)
    stacker.add("", parsed)
    return stacker.frame(with_site_id=False)


def _site_files(raw_dir: Path, site: str) -> SiteFiles:
    files, errors = find_site_files(raw_dir)
    if site.casefold() not in files:
        names = [str(error) for error in errors][:3]
        raise RawFormatError(raw_dir, None, f"no files for site {site}" + (f"; {names}" if names else ""))
    return files[site.casefold()]


def _read_file(job: FileJob, offsets: dict[str, float], params: Params) -> series.SiteSeries:
    if job.kind == "daily":
        return series.read_daily_file(job.found, params.unknown_columns)
    applied = _applied_offset(job, offsets, params)
    return series.read_subdaily_file(job.found, applied, params.unknown_columns)


def _applied_offset(job: FileJob, offsets: dict[str, float], params: Params) -> float | None:
    """The UTC offset a sub-daily file is shifted by (None for local time); raises when it is unknown."""
    if params.time_reference != "utc":
        return None
    if job.key not in offsets:
        raise RawFormatError(job.found.path, None, f"no UTC offset for site {job.site_id}: give UTC_OFFSET"
                             " in the FLX_AA-Flx_CH4-META file or params.utc_offsets_h, or read with"
                             " time_reference=local_standard")
    return offsets[job.key]


def _declared_columns(jobs: list[FileJob], offsets: dict[str, float], params: Params) -> dict[str, tuple[str, bool]]:
    """The half-hourly columns: those of every sub-daily file that can pass, first seen in stacking order."""
    columns: dict[str, tuple[str, bool]] = {}
    for job in (job for job in jobs if job.kind == "subdaily"):
        try:
            _applied_offset(job, offsets, params)
            found = series.subdaily_columns(job.found, params.unknown_columns)
        except RawFormatError:
            continue  # the file fails when it is read, with the error it meets first
        columns |= {column: spec for column, spec in found.items() if column not in columns}
    return columns


def _offsets(metadata: pd.DataFrame | None, params: Params) -> dict[str, float]:
    offsets: dict[str, float] = {}
    if metadata is not None:
        known = metadata.dropna(subset=["utc_offset_h"])
        offsets = dict(zip(known["site_id"].str.casefold(), known["utc_offset_h"], strict=True))
    return offsets | {site.casefold(): hours for site, hours in params.utc_offsets_h.items()}


def _sites_table(files: dict[str, SiteFiles], known: dict[str, str],
                 daily: dict[str, series.SiteSeries], subdaily: dict[str, series.SiteSeries],
                 metadata: pd.DataFrame | None, offsets: dict[str, float], time_unit: str) -> Table:
    """One row per site with data: products, record span and resolution, metadata."""
    rows = []
    for key, site in files.items():
        site_id = known.get(key, site.site)
        day, sub = daily.get(site_id), subdaily.get(site_id)
        if day is None and sub is None:
            continue
        used = [f for f, s in ((site.daily, day), (site.subdaily, sub)) if f is not None and s is not None]
        dates = day.times["date"] if day is not None else np.array([], "datetime64[D]")
        starts = sub.times["timestamp_start"] if sub is not None else np.array([], "datetime64[m]")
        ends = sub.times["timestamp_end"] if sub is not None else starts
        rows.append({
            "site_id": site_id,
            "product": " + ".join(sorted({f.product for f in used})),
            "product_version": " + ".join(sorted({f.version for f in used})),
            "first_date": dates.min() if len(dates) else None,
            "last_date": dates.max() if len(dates) else None,
            "n_days": len(dates) if day is not None else None,
            "subdaily_step_min": sub.step_min if sub is not None else None,
            "n_subdaily": len(starts) if sub is not None else None,
            "first_timestamp_start": starts.min() if len(starts) else None,
            "last_timestamp_end": ends.max() if len(ends) else None,
            "utc_offset_h": offsets.get(key),
        })
    return Table("sites", series.sites_frame(rows, metadata, time_unit == "UTC"), ("site_id",),
                 SITE_UNITS | dict.fromkeys(("first_timestamp_start", "last_timestamp_end"), time_unit))
