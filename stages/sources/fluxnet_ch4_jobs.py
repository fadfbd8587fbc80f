"""The order FLUXNET-CH4 files are read in, the one pass that reads them, and which error `raise` reports.

Files are read once, in the order their rows are stacked (sites sorted by their spelled code, the
daily file before the sub-daily one), so each can be copied straight into its table: `FileScan`
parses each file while the one before is consumed, stacks the daily rows itself and hands the
sub-daily series on (to the streamed `halfhourly` table).

Site codes are found case-insensitively, so the order files are *named* in (case-folded code)
may differ from the stacking order. With `on_error="raise"` the error reported is the first one
in that naming order, as if the files had been read one by one in it: on a failure, the files
named earlier but not read yet are checked first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Literal

from stages.prefetch import ordered_map
from stages.sources.fluxnet_ch4_files import DataFile, SiteFiles
from stages.sources.fluxnet_ch4_series import SiteSeries
from stages.sources.fluxnet_ch4_stack import Stacker
from stages.tables import RawFormatError

Kind = Literal["daily", "subdaily"]
KINDS: tuple[Kind, ...] = ("daily", "subdaily")


@dataclass(frozen=True)
class FileJob:
    """One data file to read: its site (case-folded key and spelled code), kind and size."""

    key: str
    site_id: str
    kind: Kind
    found: DataFile
    size: int  # bytes, to size the stacked arrays ahead

    @property
    def named_order(self) -> tuple[str, int]:
        """Position in the order the files are named in (case-folded site code, daily first)."""
        return self.key, KINDS.index(self.kind)


class FileScan:
    """Reads every file once, in stacking order; keeps each file's checked series, minus its columns.

    With `raise_errors` the first bad file (in named order) raises; otherwise it is left out and
    its error appended to `errors`. `daily` stacks the daily rows as they are read.
    """

    def __init__(self, jobs: list[FileJob], read_one: Callable[[FileJob], SiteSeries],
                 daily: Stacker, errors: list[RawFormatError], raise_errors: bool):
        """Nothing is read until `subdaily` or `finish` is called."""
        self.jobs, self.read_one, self.daily = jobs, read_one, daily
        self.errors, self.raise_errors = errors, raise_errors
        self.parsed: dict[str, dict[str, SiteSeries]] = {kind: {} for kind in KINDS}
        self.done = 0  # jobs[:done] are taken care of

    def subdaily(self) -> Iterator[tuple[FileJob, SiteSeries]]:
        """The sub-daily files that pass with their series (the consumer empties the columns)."""
        remaining = self.jobs[self.done:]
        results = ordered_map(partial(attempt, self.read_one), remaining, workers=1, ahead=1)
        try:
            for job, result in zip(remaining, results, strict=True):
                self.done += 1
                if self._take(job, result):
                    yield job, result
        finally:  # its worker thread ends now, also when an error leaves this loop (not at a later GC)
            results.close()

    def finish(self) -> None:
        """Read the files no one asked for (sub-daily rows are dropped): the scan is complete."""
        for _, series in self.subdaily():
            series.columns.clear()

    def _take(self, job: FileJob, result: SiteSeries | RawFormatError) -> bool:
        """Record one file's result; True for a sub-daily file that passed."""
        if isinstance(result, RawFormatError):
            if self.raise_errors:
                raise first_in_named_order(result, job, self.jobs, self.read_one)
            self.errors.append(result)
            return False
        self.parsed[job.kind][job.site_id] = result
        if job.kind == "daily":
            self.daily.add(job.site_id, result, job.size)
            return False
        return True


def file_jobs(files: dict[str, SiteFiles], site_ids: dict[str, str]) -> list[FileJob]:
    """Every data file, in stacking order: sites sorted by spelled code, daily before sub-daily."""
    jobs = []
    for key in sorted(files, key=lambda key: site_ids[key]):
        for kind in KINDS:
            found = getattr(files[key], kind)
            if found is not None:
                jobs.append(FileJob(key, site_ids[key], kind, found, found.path.stat().st_size))
    return jobs


def first_in_named_order(error: RawFormatError, failed: FileJob, jobs: list[FileJob],
                         read_one: Callable[[FileJob], SiteSeries]) -> RawFormatError:
    """The error a one-by-one read in named order meets first, given `failed` is the first failure."""
    read = jobs[:jobs.index(failed)]
    earlier = sorted((job for job in jobs if job.named_order < failed.named_order and job not in read),
                     key=lambda job: job.named_order)
    for job in earlier:
        found = attempt(read_one, job)
        if isinstance(found, RawFormatError):
            return found
    return error


def attempt(read_one: Callable[[FileJob], SiteSeries], job: FileJob) -> SiteSeries | RawFormatError:
    """`read_one(job)`, or the RawFormatError it raised (other errors propagate)."""
    try:
        return read_one(job)
    except RawFormatError as error:
        return error
