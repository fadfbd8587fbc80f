"""The large tables of the `hdf` source as Arrow batches: the grid tables, read a slab at a time, and `counts`.

A grid batch holds the rows of one file and one variable for a run of whole days (as many as fit in
`batch_rows`, at least one) or, when one day of the grid alone exceeds `batch_rows`, for one day
and a run of whole y rows. Rows go by variable, time, then cell (row-major, which is `cell_id`
order), so the batches of a file follow each other in key order. A variable on a real calendar
goes to `grid` (`time` a UTC timestamp), one on a model calendar to `grid_model_calendar` (`time`
the model's ISO date, `calendar` its name; see `times`); the two are streamed side by side, each
chunk holding a batch of one and an empty batch of the other. Columns that repeat every day
(file, variable, unit, cell_id, lat_deg, lon_deg, calendar) are built once per variable,
dictionary-encoded and cast to the table's string type; only `time` and `value` are made per
batch. A `counts` batch holds the entries of whole barcodes of one 10x matrix
(`SparseMatrix.entry_batches`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from stages.sources.hdf.grid import GridFile, GridVariable, open_grid, plan_grid, read_values
from stages.sources.hdf.layouts import say_left_out
from stages.sources.hdf.sparse import SparseMatrix
from stages.tables import RawFormatError

GRID_KEYS = ("file", "variable", "time", "cell_id")
GRID_DTYPES = {"file": "string", "variable": "string", "time": "datetime64[us, UTC]", "cell_id": "string",
               "lat_deg": "float64", "lon_deg": "float64", "value": "float64", "unit": "string"}
GRID_TEMPLATE = pd.DataFrame({column: pd.Series([], dtype=dtype) for column, dtype in GRID_DTYPES.items()})
GRID_SCHEMA = pa.Schema.from_pandas(GRID_TEMPLATE, preserve_index=False)
MODEL_GRID_DTYPES = GRID_DTYPES | {"time": "string", "calendar": "string"}  # time: the model's ISO date
MODEL_GRID_SCHEMA = pa.Schema.from_pandas(
    pd.DataFrame({column: pd.Series([], dtype=dtype) for column, dtype in MODEL_GRID_DTYPES.items()}),
    preserve_index=False)
GRID_TABLES = {"grid": GRID_SCHEMA, "grid_model_calendar": MODEL_GRID_SCHEMA}  # streamed side by side
BATCH_ROWS = 1 << 20  # ~100 MB of Arrow buffers per grid batch; at 128 x 128 cells: 64 days


def grid_chunks(grid: GridFile, file: str, batch_rows: int = BATCH_ROWS) -> Iterator[dict[str, pa.Table]]:
    """Yield chunks of both grid tables for one file: each variable's batches in its table, the other empty."""
    empty = {table: schema.empty_table() for table, schema in GRID_TABLES.items()}
    for variable in grid.variables:
        table = "grid" if variable.calendar is None else "grid_model_calendar"
        for batch in _variable_batches(grid, variable, file, batch_rows):
            yield empty | {table: batch}


def grid_batches(grid: GridFile, file: str, batch_rows: int = BATCH_ROWS) -> Iterator[pa.Table]:
    """Yield the grid rows of one file (`file`: its name in the table) as batches in key order.

    A data error (an undeclared sentinel, an unreadable chunk) raises when its slab is reached,
    after the batches before it were yielded; `check_values` finds it without yielding anything.
    A variable on a model calendar gives batches of the `grid_model_calendar` schema.
    """
    for variable in grid.variables:
        yield from _variable_batches(grid, variable, file, batch_rows)


def check_values(grid: GridFile, batch_rows: int = BATCH_ROWS) -> None:
    """Read every value of the chosen variables once, in file order, raising the first data error."""
    for variable in grid.variables:
        with open_grid(grid.path) as dataset:
            for t0, t1, y0, y1 in slabs(len(variable.times), *variable.shape, batch_rows):
                read_values(dataset, grid.path, variable, slice(t0, t1), slice(y0, y1))


def counts_batches(matrix: SparseMatrix, file: str, batch_rows: int = BATCH_ROWS) -> Iterator[pa.Table]:
    """Yield the `counts` rows (file, barcode, feature_id, count) of one file's matrix in key order."""
    barcodes = pa.array(matrix.barcodes, pa.string())
    features = pa.array(matrix.features["feature_id"].to_numpy(dtype=object), pa.string())
    for columns, rows, counts in matrix.entry_batches(batch_rows):
        yield pa.table({"file": _strings(pa.array([file]), np.zeros(len(counts), np.int32)),
                        "barcode": _strings(barcodes, columns.astype(np.int32)),
                        "feature_id": _strings(features, rows.astype(np.int32)), "count": pa.array(counts)})


def counts_chunks(matrix: SparseMatrix, file: str, batch_rows: int = BATCH_ROWS) -> Iterator[dict[str, pa.Table]]:
    """`counts_batches` as chunks of the one `counts` stream."""
    for batch in counts_batches(matrix, file, batch_rows):
        yield {"counts": batch}


def read_grid(path: Path, variables: list[str] | None = None) -> pd.DataFrame:
    """Long table `variable, time, cell_id, lat_deg, lon_deg, value, unit` of a file's grid variables.

    The whole table in memory, for small files; `variables=None` reads every variable on a
    (time, y, x) grid and names the other data variables on stderr; naming a variable that is in
    the file but not on such a grid is an error. On a model calendar `time` is the model's ISO
    date and a `calendar` column follows (the `grid_model_calendar` table); a file with variables
    on both kinds of calendar is read with `read` or one kind of variable at a time.
    """
    plan = plan_grid(path, variables)
    say_left_out(plan.left_out)
    calendars = {variable.calendar is None for variable in plan.variables}
    if len(calendars) > 1:
        raise RawFormatError(path, None, "variables on a real and on a model calendar: name the ones of one "
                             "kind in `variables`")
    schema = MODEL_GRID_SCHEMA if calendars == {False} else GRID_SCHEMA
    batches = list(grid_batches(plan, ""))
    frame = pa.concat_tables(batches or [schema.empty_table()]).to_pandas()
    return frame.drop(columns="file")


def slabs(n_times: int, ny: int, nx: int, batch_rows: int) -> list[tuple[int, int, int, int]]:
    """(t0, t1, y0, y1) slabs of at most `batch_rows` values (or one y row), in (time, y) order."""
    per_day = ny * nx
    if per_day == 0:
        return []
    if batch_rows >= per_day:
        days = batch_rows // per_day
        return [(t, min(t + days, n_times), 0, ny) for t in range(0, n_times, days)]
    rows = max(1, batch_rows // nx)
    return [(t, t + 1, y, min(y + rows, ny)) for t in range(n_times) for y in range(0, ny, rows)]


def _variable_batches(grid: GridFile, variable: GridVariable, file: str, batch_rows: int) -> Iterator[pa.Table]:
    with open_grid(grid.path) as dataset:  # per variable: closing frees its chunk cache (64 MB)
        in_order = bool((variable.order == np.arange(len(variable.order))).all())
        blocks: dict[tuple[int, int], dict[str, pa.Array]] = {}
        for t0, t1, y0, y1 in slabs(len(variable.times), *variable.shape, batch_rows):
            if in_order:
                values = read_values(dataset, grid.path, variable, slice(t0, t1), slice(y0, y1))
            else:  # read the file's times in increasing index order, then put them in time order
                wanted = variable.order[t0:t1]
                indices = np.sort(wanted)
                values = read_values(dataset, grid.path, variable, indices, slice(y0, y1))
                values = values[np.searchsorted(indices, wanted)]
            if (y0, y1) not in blocks:  # the first slab of a row range is its longest
                blocks[(y0, y1)] = _repeated_columns(file, variable, y0, y1, t1 - t0)
            yield _batch(blocks[(y0, y1)], variable, t0, t1, values)


def _repeated_columns(file: str, variable: GridVariable, y0: int, y1: int, days: int) -> dict[str, pa.Array]:
    """The columns that repeat every day, for `days` days of the cells in y rows `y0:y1`."""
    nx = variable.shape[1]
    cells = variable.cells.iloc[y0 * nx:y1 * nx]
    size = len(cells) * days
    cell_index = np.tile(np.arange(len(cells), dtype=np.int32), days)
    calendar = {} if variable.calendar is None else {
        "calendar": _strings(pa.array([variable.calendar]), np.zeros(size, np.int32))}
    return {
        "file": _strings(pa.array([file]), np.zeros(size, np.int32)),
        "variable": _strings(pa.array([variable.name]), np.zeros(size, np.int32)),
        "cell_id": _strings(pa.array(cells["cell_id"].to_numpy(dtype=object), pa.string()), cell_index),
        "lat_deg": pa.array(np.tile(cells["lat_deg"].to_numpy(np.float64), days), from_pandas=True),
        "lon_deg": pa.array(np.tile(cells["lon_deg"].to_numpy(np.float64), days), from_pandas=True),
        "unit": _strings(pa.array([variable.unit]), np.zeros(size, np.int32)),
    } | calendar


def _strings(values: pa.Array, indices: np.ndarray) -> pa.Array:
    """`values[indices]` built as a dictionary array, cast to the tables' string type."""
    return pa.DictionaryArray.from_arrays(pa.array(indices), values).cast(GRID_SCHEMA.field("file").type)


def _batch(repeated: dict[str, pa.Array], variable: GridVariable, t0: int, t1: int,
           values: np.ndarray) -> pa.Table:
    size = values.size
    per_day = size // (t1 - t0)
    if variable.calendar is None:
        schema = GRID_SCHEMA
        time = pa.array(np.repeat(variable.times[t0:t1].asi8, per_day), GRID_SCHEMA.field("time").type)
    else:
        schema = MODEL_GRID_SCHEMA
        days = np.repeat(np.arange(t1 - t0, dtype=np.int32), per_day)
        time = _strings(pa.array(list(variable.times[t0:t1]), pa.string()), days)
    columns = {name: array.slice(0, size) for name, array in repeated.items()} | {
        "time": time,
        "value": pa.array(values.reshape(-1), from_pandas=True),
    }
    return pa.Table.from_arrays([columns[name] for name in schema.names], schema=schema)
