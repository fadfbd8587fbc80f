"""The `halfhourly` table as a stream of row-group batches, built while the writer encodes.

`fluxnet_ch4.read` checks every file first: the `sites` table it yields first needs every file's
rows, and a bad file must be known before anything is written. Of the half-hourly rows, that pass
keeps only the first batch (`FirstBatch`). The stream hands the repository writer batches of
`ROW_GROUP_ROWS` rows, the row groups `pyarrow.parquet.write_table` cuts a whole table into, so
the file is the same, byte for byte, as writing the whole frame: the kept first batch, then
batches of the files that passed re-read in stacking order, batch k + 1 built on a worker thread
(parse, check, copy) while the writer encodes batch k. Folders under one batch are read once.

Memory: about three batches (~0.5 GB each with ~55 columns: the one being built, the one being
encoded and the one before, whose last row the writer keeps for its key check) and the file being
parsed, however many sites; the whole frame is ~2.8 GB for 40 sites x 10 years.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyarrow as pa

from stages.prefetch import ordered_map
from stages.sources.fluxnet_ch4_jobs import FileJob
from stages.sources.fluxnet_ch4_series import SiteSeries
from stages.sources.fluxnet_ch4_stack import Stacker
from stages.tables import StreamedTables, TableStream

ROW_GROUP_ROWS = 1024 * 1024  # pyarrow's default row group length
NAME = "halfhourly"
KEYS = ("site_id", "timestamp_start")
TIME_NAMES = ("timestamp_start", "timestamp_end")
Segment = tuple[FileJob, int, int]  # a file's rows [start, stop)


class FirstBatch:
    """The first `batch_rows` rows of the files offered in stacking order, kept while they are read."""

    def __init__(self, batch_rows: int | None = None):
        """An empty first batch of `batch_rows` (default `ROW_GROUP_ROWS`) rows."""
        self.batch_rows = batch_rows or ROW_GROUP_ROWS
        self.stacker = Stacker(TIME_NAMES, rows=self.batch_rows)
        self.rows = 0

    def offer(self, job: FileJob, series: SiteSeries) -> None:
        """Keep the rows of `series` that still fit (or none); empties `series.columns` either way."""
        take = min(series.rows, self.batch_rows - self.rows)
        if take:
            self.stacker.add(job.site_id, _rows(series, 0, take))
            self.rows += take
        series.columns.clear()


class SiteBatches:
    """Re-iterable batches of sub-daily rows; an iteration re-reads the files (the first one may not)."""

    def __init__(self, jobs: list[FileJob], rows: list[int], read_one: Callable[[FileJob], SiteSeries],
                 columns: dict[str, tuple[str, bool]], utc: bool, first: FirstBatch | None = None):
        """`jobs` (files that passed, stacking order) with their `rows`; `columns`: see `Stacker`.

        `first`: the first batch kept as the files were checked, used by the first iteration.
        """
        self.jobs, self.rows, self.read_one = jobs, rows, read_one
        self.columns, self.utc = columns, utc
        self.batch_rows = first.batch_rows if first is not None else ROW_GROUP_ROWS  # same cut if re-read
        self.first = first
        self.template = self.new_stacker(0).frame()
        self.schema = pa.Schema.from_pandas(self.template, preserve_index=False)

    def __iter__(self) -> Iterator[dict[str, pa.Table]]:
        """`{"halfhourly": batch}` per row group, the next one built on a worker thread."""
        plan = self._plan()
        kept, self.first = self.first, None
        if plan and kept is not None:
            kept.stacker.declare(self.columns)
            plan[0] = kept.stacker
        for batch in ordered_map(_Builder(self).batch, plan, workers=1, ahead=1):
            yield {NAME: batch}

    def new_stacker(self, rows: int) -> Stacker:
        """An empty stacker for `rows` rows of this table's columns."""
        return Stacker(TIME_NAMES, rows=rows, columns=self.columns, utc=self.utc)

    def _plan(self) -> list[list[Segment] | Stacker]:
        """The files' rows cut into batches of `batch_rows` (a file may straddle two)."""
        batches: list[list[Segment] | Stacker] = [[]]
        filled = 0
        for job, n in zip(self.jobs, self.rows, strict=True):
            start = 0
            while start < n:
                if filled == self.batch_rows:
                    batches.append([])
                    filled = 0
                stop = min(n, start + self.batch_rows - filled)
                batches[-1].append((job, start, stop))
                filled += stop - start
                start = stop
        return [batch for batch in batches if batch]


class _Builder:
    """Builds batches in order, keeping the last file read (a file straddling two batches is read once)."""

    def __init__(self, batches: SiteBatches):
        self.batches = batches
        self.last: tuple[FileJob, SiteSeries] | None = None

    def batch(self, segments: list[Segment] | Stacker) -> pa.Table:
        stacker = segments if isinstance(segments, Stacker) else self.stacked(segments)
        return pa.Table.from_pandas(stacker.frame(), schema=self.batches.schema, preserve_index=False)

    def stacked(self, segments: list[Segment]) -> Stacker:
        stacker = self.batches.new_stacker(sum(stop - start for _, start, stop in segments))
        for job, start, stop in segments:
            if self.last is None or self.last[0] != job:
                self.last = job, self.batches.read_one(job)
            stacker.add(job.site_id, _rows(self.last[1], start, stop))
        return stacker


def halfhourly_stream(jobs: list[FileJob], series: dict[str, SiteSeries], read_one: Callable[[FileJob], SiteSeries],
                      time_unit: str, first: FirstBatch | None = None) -> StreamedTables:
    """The `halfhourly` table of the sub-daily files that passed (`series`: their checked rows).

    `first`: the first batch, kept from the files as `series` were read (offered in `jobs` order).
    """
    columns: dict[str, tuple[str, bool]] = {}
    for job in jobs:  # first seen over the sites in stacking order, as `Stacker` orders them
        found = series[job.site_id]
        columns |= {c: (u, c in found.flags) for c, u in found.units.items() if c not in columns}
    rows = [series[job.site_id].rows for job in jobs]
    chunks = SiteBatches(jobs, rows, read_one, columns, any(series[job.site_id].utc for job in jobs), first)
    units = {column: unit for column, (unit, _) in columns.items()} | dict.fromkeys(TIME_NAMES, time_unit)
    return StreamedTables((TableStream(NAME, chunks.template, KEYS, units),), chunks)


def _rows(site: SiteSeries, start: int, stop: int) -> SiteSeries:
    """Rows [start, stop) of a site's series (views; `Stacker.add` consumes only this copy's dict)."""
    return SiteSeries({name: values[start:stop] for name, values in site.times.items()},
                      {name: values.slice(start, stop - start) for name, values in site.columns.items()},
                      site.units, site.flags, site.step_min, site.utc)
