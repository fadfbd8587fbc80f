"""The order FLUXNET-CH4 files are read in, and which error `raise` mode reports.

Files are read in the order their rows are stacked (sites sorted by their spelled code, the daily
file before the sub-daily one), so each can be copied straight into its table.

Site codes are found case-insensitively, so the order files are *named* in (case-folded code)
may differ from the stacking order. With `on_error="raise"` the error reported is the first one
in that naming order, as if the files had been read one by one in it: on a failure, the files
named earlier but not read yet are checked first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from stages.sources.fluxnet_ch4_files import DataFile, SiteFiles
from stages.sources.fluxnet_ch4_series import SiteSeries
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
