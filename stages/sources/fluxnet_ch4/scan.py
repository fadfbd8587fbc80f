"""Reading the planned files once each: one file through parse -> check -> assemble, and which error counts.

`read` plans every data file (`plan`: its site, kind, header and UTC offset, in stacking order:
sites sorted by their spelled code, the daily file first) and a `Scan` reads them. Site codes are
found case-insensitively, so the order files are *named* in (case-folded code) may differ from
the stacking order; with `on_error="raise"` the error reported is the first in that naming order,
as if the files had been read one by one in it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np

from stages.sources.fluxnet_ch4 import assemble, check, parse
from stages.sources.fluxnet_ch4.assemble import Columns, SiteSeries
from stages.sources.fluxnet_ch4.files import DataFile, SiteFiles
from stages.tables import NonFinite, RawFormatError

Kind = Literal["daily", "subdaily"]
KINDS: tuple[Kind, ...] = ("daily", "subdaily")
TIME_COLUMNS = {"daily": ("TIMESTAMP",), "subdaily": ("TIMESTAMP_START", "TIMESTAMP_END")}


@dataclass(frozen=True)
class FileJob:
    """One data file to read: its site (case-folded key and spelled code), kind, and header (or its error)."""

    key: str
    site_id: str
    kind: Kind
    found: DataFile
    header: parse.Header | RawFormatError
    utc_offset_h: float | None  # None: local standard time
    offset_error: RawFormatError | None = None  # UTC wanted but the site's offset is unknown

    @property
    def named_order(self) -> tuple[str, int]:
        """Position in the order the files are named in (case-folded site code, daily first)."""
        return self.key, KINDS.index(self.kind)


def read_daily_file(found: DataFile, header: parse.Header, unknown_columns: str) -> SiteSeries:
    """Parse, check and assemble one `_DD_` file."""
    raw = parse.read_csv(found.path, header, TIME_COLUMNS["daily"])
    times = check.daily_times(raw, found)
    variables = check.variables(found.path, header, TIME_COLUMNS["daily"], unknown_columns)
    check.check_values(raw, variables)
    return assemble.site_series(raw, times, variables, None, utc=False)


def read_subdaily_file(found: DataFile, header: parse.Header, utc_offset_h: float | None,
                       unknown_columns: str) -> SiteSeries:
    """Parse, check and assemble one `_HH_` or AmeriFlux BASE file; times shifted to UTC if an offset is given."""
    raw = parse.read_csv(found.path, header, TIME_COLUMNS["subdaily"])
    times, step = check.subdaily_times(raw, found)
    variables = check.variables(found.path, header, TIME_COLUMNS["subdaily"], unknown_columns)
    check.check_values(raw, variables)
    if utc_offset_h is not None:
        shift = np.timedelta64(int(round(utc_offset_h * 60)), "m")
        times = {name: values - shift for name, values in times.items()}
    return assemble.site_series(raw, times, variables, step, utc=utc_offset_h is not None)


class Scan:
    """Reads each planned file once, keeping what the `sites` and `quarantine` tables need of it.

    `passing(kind)` reads the files of that kind not read yet, in order, and yields those that
    pass; a bad file raises (`on_error="raise"`) or is left out with its error recorded.
    """

    def __init__(self, jobs: list[FileJob], raise_errors: bool, unknown_columns: str,
                 errors: list[RawFormatError]):
        """Nothing is read yet; `errors` collects the files left out."""
        self.jobs, self.raise_errors, self.unknown_columns = jobs, raise_errors, unknown_columns
        self.errors = errors
        self.read: set[int] = set()
        self.spans: dict[Kind, dict[str, SiteSeries]] = {kind: {} for kind in KINDS}  # without their rows
        self.nonfinite: list[NonFinite] = []

    def passing(self, kind: Kind) -> Iterator[tuple[FileJob, SiteSeries]]:
        """The files of `kind` not read yet that pass, with their series."""
        for index, job in enumerate(self.jobs):
            if job.kind != kind or index in self.read:
                continue
            self.read.add(index)
            result = attempt(job, self.unknown_columns)
            if isinstance(result, RawFormatError):
                if self.raise_errors:
                    raise self._first_in_named_order(result, job)
                self.errors.append(result)
                continue
            self.spans[kind][job.site_id] = result.without_rows()
            self.nonfinite += [NonFinite(job.found.path, column, n) for column, n in result.nonfinite.items()]
            yield job, result

    def _first_in_named_order(self, error: RawFormatError, failed: FileJob) -> RawFormatError:
        """The error a one-by-one read in named order meets first, given `failed` is the first failure met."""
        unread = [job for i, job in enumerate(self.jobs) if i not in self.read]
        for job in sorted((job for job in unread if job.named_order < failed.named_order),
                          key=lambda job: job.named_order):
            if isinstance(found := attempt(job, self.unknown_columns), RawFormatError):
                return found
        return error


def plan(files: dict[str, SiteFiles], site_ids: dict[str, str], offsets: dict[str, float],
         utc: bool) -> list[FileJob]:
    """Every data file in stacking order (sites sorted by spelled code, daily first), its header read."""
    jobs = []
    for key in sorted(files, key=lambda key: site_ids[key]):
        for kind in KINDS:
            if (found := getattr(files[key], kind)) is not None:
                jobs.append(_job(key, site_ids[key], kind, found, offsets, utc))
    return jobs


def _job(key: str, site_id: str, kind: Kind, found: DataFile, offsets: dict[str, float], utc: bool) -> FileJob:
    try:
        header: parse.Header | RawFormatError = parse.read_header(found.path, TIME_COLUMNS[kind])
    except RawFormatError as error:
        header = error
    if kind == "daily" or not utc:
        return FileJob(key, site_id, kind, found, header, None)
    if key not in offsets:
        missing = RawFormatError(found.path, None, f"no UTC offset for site {site_id}: give UTC_OFFSET in the"
                                 " FLX_AA-Flx_CH4-META file or params.utc_offsets_h, or read with"
                                 " time_reference=local_standard")
        return FileJob(key, site_id, kind, found, header, None, missing)
    return FileJob(key, site_id, kind, found, header, offsets[key])


def attempt(job: FileJob, unknown_columns: str) -> SiteSeries | RawFormatError:
    """Read one planned file, or the RawFormatError it meets first."""
    if job.offset_error is not None:
        return job.offset_error
    if isinstance(job.header, RawFormatError):
        return job.header
    try:
        if job.kind == "daily":
            return read_daily_file(job.found, job.header, unknown_columns)
        return read_subdaily_file(job.found, job.header, job.utc_offset_h, unknown_columns)
    except RawFormatError as error:
        return error


def declared_columns(jobs: list[FileJob], unknown_columns: str) -> Columns:
    """The `halfhourly` columns: those of every sub-daily file that can pass, first seen in stacking order.

    Known from the headers alone, before any rows are read; a file left out later for a bad row
    still declares its columns (they hold nulls, and the quarantine table says why).
    """
    columns: Columns = {}
    for job in jobs:
        if job.kind != "subdaily" or job.offset_error is not None or isinstance(job.header, RawFormatError):
            continue
        try:
            found = check.variables(job.found.path, job.header, TIME_COLUMNS["subdaily"], unknown_columns)
        except RawFormatError:
            continue  # the file fails when it is read
        columns |= {v.column: (v.unit, v.is_flag) for v in found if v.column not in columns}
    return columns
