"""The long `grid` table of the hdf source turned into one row per cell and day, without loading it.

The grid table (file, variable, time, cell_id, ..., value) is read a row group at a time and its
values are placed into one (cell x day) array per variable; the wide table is then written cell by
cell in batches. Memory is the arrays (8 bytes per cell, day and variable: 3.3 GB for 128 x 128
cells x 10 years x 7 variables), never the long table (418 M rows at that size).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from stages.domains.columns import column_name
from stages.tables import StreamedTables, TableStream

DAY_US = 86_400_000_000
CELLS_PER_BATCH = 1024


@dataclass(frozen=True)
class DailyGrid:
    """Daily values per variable as (cell, day) arrays (NaN where the grid has no value)."""

    cell_ids: list[str]  # sorted
    first_day: int  # days since 1970-01-01
    values: dict[str, np.ndarray]  # column name -> (cells, days)
    units: dict[str, str]  # column name -> unit

    def simulated(self) -> np.ndarray:
        """(cell, day) has a value of at least one variable."""
        present = np.zeros((len(self.cell_ids), self._days()), dtype=bool)
        for array in self.values.values():
            present |= ~np.isnan(array)
        return present

    def _days(self) -> int:
        return next(iter(self.values.values())).shape[1] if self.values else 0


def read_daily_grid(path: Path, file: str, cell_ids: list[str]) -> DailyGrid:
    """Place every value of `file` in the grid table at `path` into per-variable (cell, day) arrays."""
    grid = pq.ParquetFile(path, read_dictionary=["file", "variable", "unit", "cell_id"])
    first, last = _day_range(grid)
    position = {cell: index for index, cell in enumerate(cell_ids)}
    raw: dict[str, np.ndarray] = {}
    units: dict[str, set[str]] = {}
    for group in range(grid.metadata.num_row_groups):
        rows = grid.read_row_group(group, columns=["file", "variable", "time", "cell_id", "value", "unit"])
        rows = rows.filter(pc.equal(rows.column("file").cast(pa.string()), file))
        if not rows.num_rows:
            continue
        micros = rows.column("time").cast(pa.int64()).to_numpy()
        if (micros % DAY_US).any():
            raise ValueError(f"{file}: grid times are not whole days at 00:00 UTC; gridcells joins daily grids")
        days = micros // DAY_US - first
        cells = _codes(rows.column("cell_id"), position, file)
        variables = rows.column("variable").combine_chunks()
        values = rows.column("value").to_numpy(zero_copy_only=False)
        unit_column = rows.column("unit").combine_chunks()
        for code, variable in enumerate(variables.dictionary.to_pylist()):
            mine = (variables.indices.to_numpy(zero_copy_only=False) == code)
            if not mine.any():
                continue
            target = raw.setdefault(variable, np.full((len(cell_ids), last - first + 1), np.nan))
            target[cells[mine], days[mine]] = values[mine]
            found = pc.unique(unit_column.filter(pa.array(mine)).cast(pa.string())).drop_null().to_pylist()
            units.setdefault(variable, set()).update(found)
    columns, column_units = {}, {}
    for variable in sorted(raw):
        found = sorted(units.get(variable, set()))
        if len(found) > 1:
            raise ValueError(f"{file}: variable {variable} has several units {found}")
        unit = found[0] if found else "1"
        name = column_name(variable, unit)
        columns[name], column_units[name] = raw[variable], unit
    return DailyGrid(cell_ids, first, columns, column_units)


def daily_stream(grid: DailyGrid, key: str) -> StreamedTables:
    """The `timeseries` table: cell-days with a value of any variable, cell by cell, days increasing."""
    template = pd.DataFrame({key: pd.array([], dtype="string"), "date": pd.array([], dtype=pd.ArrowDtype(pa.date32()))}
                            | {name: pd.array([], dtype="float64") for name in grid.values})
    stream = TableStream("timeseries", template, (key, "date"), grid.units)
    return StreamedTables((stream,), _batches(grid, key))


def _batches(grid: DailyGrid, key: str):
    present = grid.simulated()
    ids = pa.array(grid.cell_ids, pa.string())
    for start in range(0, len(grid.cell_ids), CELLS_PER_BATCH):
        cells, days = np.nonzero(present[start:start + CELLS_PER_BATCH])
        columns = {
            key: pa.DictionaryArray.from_arrays(pa.array(cells + start, pa.int32()), ids).cast(pa.string()),
            "date": pa.array((days + grid.first_day).astype(np.int32), pa.int32()).cast(pa.date32()),
        }
        for name, array in grid.values.items():
            values = array[cells + start, days]
            columns[name] = pa.array(values, pa.float64(), mask=np.isnan(values))
        yield {"timeseries": pa.table(columns)}


def _day_range(grid: pq.ParquetFile) -> tuple[int, int]:
    """First and last day of the table, from the row groups' statistics (or the column itself)."""
    index = grid.schema_arrow.get_field_index("time")
    lows, highs = [], []
    for group in range(grid.metadata.num_row_groups):
        stats = grid.metadata.row_group(group).column(index).statistics
        if stats is None or not stats.has_min_max:
            times = grid.read(columns=["time"]).column("time").cast(pa.int64())
            lows, highs = [pc.min(times).as_py()], [pc.max(times).as_py()]
            break
        lows.append(pd.Timestamp(stats.min).value // 1000)
        highs.append(pd.Timestamp(stats.max).value // 1000)
    if not lows or lows[0] is None:
        return 0, -1
    return min(lows) // DAY_US, max(highs) // DAY_US


def _codes(column: pa.ChunkedArray, position: dict[str, int], file: str) -> np.ndarray:
    """Row index of each row's cell in the sorted cell list."""
    column = column.combine_chunks()
    lookup = np.array([position.get(cell, -1) for cell in column.dictionary.to_pylist()], dtype=np.int64)
    codes = lookup[column.indices.to_numpy(zero_copy_only=False)]
    if (codes < 0).any():
        raise ValueError(f"{file}: the grid names cells that the cells table does not list")
    return codes
