"""The `halfhourly` table as a stream of row-group batches, built while the writer encodes.

Each sub-daily file is parsed and checked once (`FileScan`), its rows copied into the batch being
filled, and a full batch of `ROW_GROUP_ROWS` rows handed to the repository writer; a file may
straddle two batches. The batches are built on a thread of their own (`in_background`), one ahead,
so parsing and copying overlap the writer's Parquet encoding.

The schema has to be known before the first batch: it is the union of the columns the sub-daily
files' headers name, in stacking order (`subdaily_columns`), of the files whose header is valid and
whose time reference is known. A file quarantined later, for a bad row, still contributes its
columns; they hold nulls, and the quarantine table says why.

Memory: about four batches (~120 MB each with ~55 columns: the one being filled, the one waiting,
the one being encoded and the one before, whose last row the writer keeps for its key check) and
the file being parsed, however many sites; the whole frame is ~2.8 GB for 40 sites x 10 years.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from stages.prefetch import in_background
from stages.sources.fluxnet_ch4_jobs import FileJob, FileScan
from stages.sources.fluxnet_ch4_series import SiteSeries
from stages.sources.fluxnet_ch4_stack import Stacker
from stages.tables import LiveChunks, StreamedTables, TableStream

ROW_GROUP_ROWS = 256 * 1024
NAME = "halfhourly"
KEYS = ("site_id", "timestamp_start")
TIME_NAMES = ("timestamp_start", "timestamp_end")
Columns = dict[str, tuple[str, bool]]  # column -> (unit, is a flag), in output order


def halfhourly_stream(scan: FileScan, columns: Columns, utc: bool, time_unit: str) -> StreamedTables:
    """The `halfhourly` table of the sub-daily files `scan` reads that pass, with `columns` declared."""
    template = _new_stacker(columns, utc, 0).frame()
    schema = pa.Schema.from_pandas(template, preserve_index=False)
    batches = _batches(scan.subdaily(), columns, utc, schema, ROW_GROUP_ROWS)
    units = {column: unit for column, (unit, _) in columns.items()} | dict.fromkeys(TIME_NAMES, time_unit)
    chunks = LiveChunks(({NAME: batch} for batch in in_background(batches, ahead=1)), NAME)
    return StreamedTables((TableStream(NAME, template, KEYS, units),), chunks)


def _batches(files: Iterator[tuple[FileJob, SiteSeries]], columns: Columns, utc: bool, schema: pa.Schema,
             batch_rows: int) -> Iterator[pa.Table]:
    """The files' rows, in order, cut into Arrow tables of `batch_rows` rows (the last one shorter)."""
    stacker, filled = _new_stacker(columns, utc, batch_rows), 0
    for job, series in files:
        start = 0
        while start < series.rows:
            stop = min(series.rows, start + batch_rows - filled)
            stacker.add(job.site_id, _rows(series, start, stop))
            filled += stop - start
            start = stop
            if filled == batch_rows:
                yield pa.Table.from_pandas(stacker.frame(), schema=schema, preserve_index=False)
                stacker, filled = _new_stacker(columns, utc, batch_rows), 0
        series.columns.clear()
    if filled:
        yield pa.Table.from_pandas(stacker.frame(), schema=schema, preserve_index=False)


def _new_stacker(columns: Columns, utc: bool, rows: int) -> Stacker:
    return Stacker(TIME_NAMES, rows=rows, columns=columns, utc=utc)


def _rows(site: SiteSeries, start: int, stop: int) -> SiteSeries:
    """Rows [start, stop) of a site's series (views; `Stacker.add` consumes only this copy's dict)."""
    return SiteSeries({name: values[start:stop] for name, values in site.times.items()},
                      {name: values.slice(start, stop - start) for name, values in site.columns.items()},
                      site.units, site.flags, site.step_min, site.utc)
