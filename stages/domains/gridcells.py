"""The `gridcells` repository: cells of a gridded daily simulation, their time series and imagery.

Joins the `hdf` source's gridded NetCDF output (one file: `cells` and the long `grid` table) with
the imagery mosaic, so that each grid cell links its simulated daily water balance to what the
images show over the same ground. Keys: `cell_id` (``lat<row>_lon<col>``) for entities; `cell_id` +
`date` for the time series. Tables:

- `entities` (cell_id): row, col, centre `lat_deg`/`lon_deg`, the cell's bounds (half-way to the
  neighbouring centres, the outer cells mirrored) and `cell_area_km2` on a sphere of radius
  6371.0088 km; only cells simulated on at least one day (ocean cells are fill everywhere).
- `timeseries` (cell_id, date): one column per grid variable, named from the variable and its unit
  (``precip`` in ``mm d-1`` -> ``precip_mm_d``, ``tair`` in ``degC`` -> ``tair_c``); the unit is
  the file's.
- with the `imagery` source: `image_stats` (cell_id, variable, date), `image_static` (cell_id,
  variable) over the cell's lon/lat box, and summary columns on `entities` (see `imagery_join`).

Only rectilinear grids of daily (midnight UTC) steps are joined; anything else raises an error
naming the file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from stages.domains.columns import column_name
from stages.domains.imagery_join import entity_imagery
from stages.sources.imagery_mosaic import LonLatBox
from stages.tables import Table

ENTITY_KEY = "cell_id"
SOURCE = "hdf"
IMAGERY = "imagery"
EARTH_RADIUS_KM = 6371.0088  # IUGG mean radius
CELL_UNITS = {"row": "1", "col": "1", "lat_deg": "degree_north", "lon_deg": "degree_east",
              "lat_south_deg": "degree_north", "lat_north_deg": "degree_north",
              "lon_west_deg": "degree_east", "lon_east_deg": "degree_east", "cell_area_km2": "km2"}


def align(inputs: dict[str, dict]) -> list[Table]:
    """Build `entities` and `timeseries` from the hdf grid (and the image tables, with imagery)."""
    source = inputs[SOURCE]
    cells, grid = source["cells"], source["grid"]
    files = sorted(set(cells["file"]))
    if len(files) != 1:
        raise ValueError(f"gridcells joins one gridded file; the hdf source holds {len(files)}: {files}")
    timeseries, series_units = daily_series(files[0], grid)
    simulated = set(timeseries[ENTITY_KEY])
    entities = cell_bounds(files[0], cells)
    entities = entities[entities[ENTITY_KEY].isin(simulated)].reset_index(drop=True)
    units = dict(CELL_UNITS)
    image_tables = []
    if IMAGERY in inputs:
        footprints = [LonLatBox(*bounds) for bounds in entities[
            ["lon_west_deg", "lat_south_deg", "lon_east_deg", "lat_north_deg"]].itertuples(index=False)]
        joined = entity_imagery(inputs[IMAGERY], entities, [ENTITY_KEY], footprints)
        entities = entities.merge(joined.summary, on=ENTITY_KEY, how="left", validate="one_to_one")
        units |= joined.summary_units
        image_tables = joined.tables
    return [Table("entities", entities, (ENTITY_KEY,), units),
            Table("timeseries", timeseries, (ENTITY_KEY, "date"), series_units), *image_tables]


def cell_bounds(file: str, cells: pd.DataFrame) -> pd.DataFrame:
    """Cells of one file with their lon/lat bounds and area, sorted by cell id."""
    cells = cells[cells["file"] == file].drop(columns="file")
    lat = _axis(file, cells, "row", "lat_deg")
    lon = _axis(file, cells, "col", "lon_deg")
    frame = cells.sort_values(ENTITY_KEY, ignore_index=True)
    south, north = _edges(lat)
    west, east = _edges(lon)
    frame["lat_south_deg"], frame["lat_north_deg"] = south[frame["row"]], north[frame["row"]]
    frame["lon_west_deg"], frame["lon_east_deg"] = west[frame["col"]], east[frame["col"]]
    sines = np.abs(np.sin(np.radians(frame["lat_north_deg"])) - np.sin(np.radians(frame["lat_south_deg"])))
    frame["cell_area_km2"] = EARTH_RADIUS_KM**2 * np.radians(frame["lon_east_deg"] - frame["lon_west_deg"]) * sines
    return frame.astype({"row": "int64", "col": "int64"})


def daily_series(file: str, grid: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """The long grid table of one file as one row per cell and day, one column per variable."""
    grid = grid[grid["file"] == file]
    times = grid["time"]
    if len(grid) and not (times == times.dt.floor("D")).all():
        raise ValueError(f"{file}: grid times are not whole days at 00:00 UTC; gridcells joins daily grids")
    pairs = grid[["variable", "unit"]].drop_duplicates().dropna(subset="unit")
    units = {variable: sorted(group["unit"]) for variable, group in pairs.groupby("variable", sort=True)}
    columns = {}
    for variable in sorted(grid["variable"].unique()):
        found = units.get(variable, [])
        if len(found) > 1:
            raise ValueError(f"{file}: variable {variable} has several units {found}")
        unit = found[0] if found else "1"
        columns[variable] = (column_name(variable, unit), unit)
    wide = grid.pivot(index=[ENTITY_KEY, "time"], columns="variable", values="value")
    wide = wide.dropna(how="all").rename(columns={v: name for v, (name, _) in columns.items()})
    wide = wide.reset_index().sort_values([ENTITY_KEY, "time"], kind="stable", ignore_index=True)
    wide.columns.name = None
    wide[ENTITY_KEY] = wide[ENTITY_KEY].astype("string")
    wide.insert(1, "date", pd.Series(pa.array(wide.pop("time")).cast(pa.date32()), dtype=pd.ArrowDtype(pa.date32())))
    return wide, {name: unit for name, unit in columns.values()}


def _axis(file: str, cells: pd.DataFrame, index: str, coordinate: str) -> np.ndarray:
    """Coordinate per row (or column) index; a value varying along it means a curvilinear grid."""
    values = cells.groupby(index, sort=True)[coordinate].agg(["min", "max"])
    if not np.allclose(values["min"], values["max"]) or (values.index != np.arange(len(values))).any():
        raise ValueError(f"{file}: {coordinate} varies within a {index}: gridcells needs a rectilinear grid")
    return values["min"].to_numpy(np.float64)


def _edges(centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper cell edges half-way between centres (the outer halves mirrored)."""
    if len(centres) == 1:
        raise ValueError("a grid axis with one cell has no spacing to derive cell bounds from")
    middle = (centres[1:] + centres[:-1]) / 2
    edges = np.concatenate([[2 * centres[0] - middle[0]], middle, [2 * centres[-1] - middle[-1]]])
    return np.minimum(edges[:-1], edges[1:]), np.maximum(edges[:-1], edges[1:])

