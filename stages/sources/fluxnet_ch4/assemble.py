"""Step 4, assemble: checked files -> the Arrow tables and frames the repository writer takes.

One file becomes one Arrow table (`site_table`): the site code, the time columns (dates as
date32; times as timestamp[ns], tz-aware UTC when shifted), the renamed variables with -9999 and
non-finite values as nulls, `_QC` flags as int8, rows in time order. Sub-daily tables go to the
writer one after the other, cut into row groups of `ROW_GROUP_ROWS` rows (`row_groups`); daily
tables are stacked into one frame (`stack`). Columns a file lacks are nulls.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pyarrow as pa

from stages.sources.fluxnet_ch4.columns import Variable
from stages.sources.fluxnet_ch4.files import METADATA_UNITS
from stages.sources.fluxnet_ch4.parse import SENTINEL, RawCsv

ROW_GROUP_ROWS = 256 * 1024
TO_PANDAS = {pa.large_string(): pd.StringDtype("pyarrow"), pa.date32(): pd.ArrowDtype(pa.date32()),
             pa.int8(): pd.Int8Dtype()}.get
Columns = dict[str, tuple[str, bool]]  # output column -> (unit, is a flag), in output order


@dataclass(frozen=True)
class SiteSeries:
    """One checked file as a table in time order, with what the `sites` table needs of it."""

    table: pa.Table  # time columns, then the renamed variables
    columns: Columns
    rows: int
    spans: dict[str, tuple[np.datetime64, np.datetime64]]  # time column -> (min, max)
    step_min: int | None
    nonfinite: dict[str, int]  # raw column -> non-finite values set to null

    def without_rows(self) -> SiteSeries:
        """The same series without its table (a slice would keep the rows' buffers alive)."""
        return replace(self, table=pa.table({}))


def site_series(raw: RawCsv, times: dict[str, np.ndarray], found: list[Variable], step_min: int | None,
                utc: bool) -> SiteSeries:
    """The file's rows sorted by time, missing values as nulls."""
    key = next(iter(times.values()))
    order = None if len(key) < 2 or (key[1:] > key[:-1]).all() else np.argsort(key, kind="stable")
    arrays = {name: _time_array(values if order is None else values[order], utc) for name, values in times.items()}
    for variable in found:
        values = raw.columns[variable.raw].to_numpy()
        values = values if order is None else values[order]
        missing = (values == SENTINEL) | np.isnan(values)
        arrays[variable.column] = (pa.array(np.where(missing, 0, values).astype(np.int8), mask=missing)
                                   if variable.is_flag else pa.array(values, mask=missing))
    columns = {variable.column: (variable.unit, variable.is_flag) for variable in found}
    spans = {name: (values.min(), values.max()) for name, values in times.items()}
    return SiteSeries(pa.table(arrays), columns, len(key), spans, step_min, raw.nonfinite)


def site_table(site_id: str | None, series: SiteSeries, columns: Columns) -> pa.Table:
    """The series behind a `site_id` column (None: without it), with exactly `columns` (nulls if absent)."""
    rows = series.rows
    arrays = {} if site_id is None else {"site_id": pa.repeat(pa.scalar(site_id, pa.large_string()), rows)}
    arrays |= {name: series.table.column(name) for name in series.table.column_names[:_time_count(series)]}
    for column, (_, is_flag) in columns.items():
        absent = pa.nulls(rows, pa.int8() if is_flag else pa.float64())
        arrays[column] = series.table.column(column) if column in series.columns else absent
    return pa.table(arrays)


def row_groups(tables: Iterable[pa.Table]) -> Iterator[pa.Table]:
    """The tables' rows, in order, cut into tables of `ROW_GROUP_ROWS` rows (the last one shorter)."""
    pending: list[pa.Table] = []
    filled = 0
    for table in tables:
        start = 0
        while start < table.num_rows:
            take = min(table.num_rows - start, ROW_GROUP_ROWS - filled)
            pending.append(table.slice(start, take))
            filled, start = filled + take, start + take
            if filled == ROW_GROUP_ROWS:
                yield pa.concat_tables(pending)
                pending, filled = [], 0
    if filled:
        yield pa.concat_tables(pending)


def stack(sites: list[tuple[str, SiteSeries]], time_names: tuple[str, ...], utc: bool,
          with_site_id: bool = True) -> tuple[pd.DataFrame, dict[str, str]]:
    """Sites' series in site order, one frame; the columns in first-seen order, each with its first unit."""
    sites = sorted(sites, key=lambda item: item[0])
    columns: Columns = {}
    for _, series in sites:
        columns |= {column: spec for column, spec in series.columns.items() if column not in columns}
    parts = [site_table(site_id if with_site_id else None, series, columns) for site_id, series in sites]
    empty = empty_table(time_names, columns, utc)
    whole = pa.concat_tables([empty.drop(["site_id"]) if not with_site_id else empty, *parts])
    return to_pandas(whole), {column: unit for column, (unit, _) in columns.items()}


def empty_table(time_names: tuple[str, ...], columns: Columns, utc: bool) -> pa.Table:
    """A zero-row table with the schema of `site_table` over `columns`."""
    time_type = pa.timestamp("ns", tz="UTC" if utc else None)
    schema = [("site_id", pa.large_string())] + [(n, pa.date32() if n == "date" else time_type) for n in time_names]
    schema += [(column, pa.int8() if is_flag else pa.float64()) for column, (_, is_flag) in columns.items()]
    return pa.schema(schema).empty_table()


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """Strings as pandas `string`, dates as Arrow date32, flags as nullable Int8, floats with NaN."""
    return table.to_pandas(types_mapper=TO_PANDAS)


def sites_frame(rows: list[dict], metadata: pd.DataFrame | None, utc: bool) -> pd.DataFrame:
    """The `sites` rows with typed columns, joined with the site metadata (ids already spelled as there)."""
    def column(name: str) -> list:
        return [row[name] for row in rows]

    def times(name: str, unit: str, tz_utc: bool = False) -> object:
        values = np.array([np.datetime64("NaT") if v is None else v for v in column(name)], unit)
        return to_pandas(pa.table({name: _time_array(values, tz_utc)}))[name].array

    frame = pd.DataFrame({
        "site_id": pd.array(column("site_id"), dtype="string"),
        "product": pd.array(column("product"), dtype="string"),
        "product_version": pd.array(column("product_version"), dtype="string"),
        "first_date": times("first_date", "datetime64[D]"),
        "last_date": times("last_date", "datetime64[D]"),
        "n_days": pd.array(column("n_days"), dtype="Int64"),
        "subdaily_step_min": pd.array(column("subdaily_step_min"), dtype="Int64"),
        "n_subdaily": pd.array(column("n_subdaily"), dtype="Int64"),
        "first_timestamp_start": times("first_timestamp_start", "datetime64[m]", utc),
        "last_timestamp_end": times("last_timestamp_end", "datetime64[m]", utc),
        "utc_offset_h": np.array([np.nan if v is None else v for v in column("utc_offset_h")], "float64"),
    })
    static = [c for c in METADATA_UNITS if c != "utc_offset_h"]
    if metadata is None:
        metadata = pd.DataFrame({"site_id": pd.array([], dtype="string")} | {
            c: pd.array([], dtype="float64" if METADATA_UNITS[c] == "deg" else "string") for c in static})
    frame = frame.merge(metadata[["site_id", *static]], on="site_id", how="left", validate="one_to_one")
    return frame.sort_values("site_id", ignore_index=True)


def _time_array(values: np.ndarray, utc: bool) -> pa.Array:
    if values.dtype == np.dtype("datetime64[D]"):
        return pa.array(values, pa.date32())
    return pa.array(values.astype("datetime64[ns]"), pa.timestamp("ns", tz="UTC" if utc else None))


def _time_count(series: SiteSeries) -> int:
    return series.table.num_columns - len(series.columns)
