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
- `native_files`: the NetCDF grid and the GeoTIFF layers themselves, for tasks that stage them
  apart (see `native_files`).

Only rectilinear grids of daily (midnight UTC) steps are joined; anything else raises an error
naming the file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stages.domains.gridcells_series import daily_stream, read_daily_grid
from stages.domains.imagery_join import entity_imagery
from stages.domains.native_files import grid_file, imagery_files, native_files_table
from stages.sources.imagery.mosaic import LonLatBox
from stages.tables import Table

ENTITY_KEY = "cell_id"
SOURCE = "hdf"
IMAGERY = "imagery"
EARTH_RADIUS_KM = 6371.0088  # IUGG mean radius
CELL_UNITS = {"row": "1", "col": "1", "lat_deg": "degree_north", "lon_deg": "degree_east",
              "lat_south_deg": "degree_north", "lat_north_deg": "degree_north",
              "lon_west_deg": "degree_east", "lon_east_deg": "degree_east", "cell_area_km2": "km2"}


def align(inputs: dict) -> list:
    """Build `entities` and `timeseries` from the hdf grid (and the image tables, with imagery).

    The long grid table is never loaded whole (see `gridcells_series`); `timeseries` is streamed.
    """
    source = inputs[SOURCE]
    cells = source["cells"]
    files = sorted(set(cells["file"]))
    if len(files) != 1:
        raise ValueError(f"gridcells joins one gridded file; the hdf source holds {len(files)}: {files}")
    every_cell = cell_bounds(files[0], cells)
    grid = read_daily_grid(source.path("grid"), files[0], every_cell[ENTITY_KEY].tolist())
    entities = every_cell[grid.simulated().any(axis=1)].reset_index(drop=True)
    units = dict(CELL_UNITS)
    image_tables = []
    native = [grid_file(source.manifest["provenance"]["raw_dir"], files[0])]
    if IMAGERY in inputs:
        native += imagery_files(inputs[IMAGERY])
        footprints = [LonLatBox(*bounds) for bounds in entities[
            ["lon_west_deg", "lat_south_deg", "lon_east_deg", "lat_north_deg"]].itertuples(index=False)]
        joined = entity_imagery(inputs[IMAGERY], entities, [ENTITY_KEY], footprints)
        entities = entities.merge(joined.summary, on=ENTITY_KEY, how="left", validate="one_to_one")
        units |= joined.summary_units
        image_tables = joined.tables
    return [Table("entities", entities, (ENTITY_KEY,), units), daily_stream(grid, ENTITY_KEY), *image_tables,
            native_files_table(native)]


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

