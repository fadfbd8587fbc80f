"""Gridded NetCDF (classic or NetCDF-4) and HDF5 with dimension scales, read via xarray.

A grid variable has exactly three dimensions, time and the two of a regular or curvilinear
horizontal grid (`layouts` tells which variables are on one, and records every other data
variable as left out, with its reason). Values equal to `_FillValue` / `missing_value` (or, with
neither declared, the NetCDF default fill of a float variable) become null; any other common
sentinel is an error. Times are CF-decoded (`times`): UTC timestamps on real calendars (the
Julian calendar converted), the model's own ISO dates and calendar name on model calendars
(noleap, 360_day, ...). A cell's centre is its latitude / longitude, from 1-D coordinates or the
2-D arrays of a curvilinear grid; longitudes are normalised to [-180, 180).

`plan_grid` checks a file's grid metadata (axes, times, cells, units, dtypes) without reading any
value; `read_values` then reads one slab (a range of times, a range of y rows) of a variable at a
time, so a cube is never held whole (`stream` turns slabs into Arrow batches).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import xarray as xr

from stages.sources.hdf.datasets import sniff
from stages.sources.hdf.layouts import find_layout, grouped_left_out, plane_coordinates
from stages.sources.hdf.times import Times, read_times
from stages.tables import LeftOut, RawFormatError

SENTINELS = (-999.0, -9999.0, -99999.0, 1e20, 1e30)


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class GridVariable:
    """One (time, y, x) variable of a file whose metadata passed every check; values are read later."""

    name: str
    dims: tuple[str, str, str]  # (time, y, x) dimension names
    unit: str
    times: pd.Index  # sorted: UTC timestamps (a DatetimeIndex), or ISO labels in `calendar`
    calendar: str | None  # None: a real calendar; else the model calendar of the labels
    order: np.ndarray  # file time index of each sorted time
    cells: pd.DataFrame  # cells of its grid, row-major (which is cell_id order)
    shape: tuple[int, int]  # (ny, nx)


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class GridFile:
    """The checked grid metadata of one file: the chosen variables, their cells, every grid name."""

    path: Path
    variables: tuple[GridVariable, ...]  # the chosen ones, sorted by name
    cells: pd.DataFrame  # every cell of the chosen variables' grids, sorted by cell_id
    names: tuple[str, ...]  # every (time, y, x) variable of the file
    left_out: tuple[LeftOut, ...]  # the data variables on no grid (none when `variables` are named)


def read_grid_cells(path: Path) -> pd.DataFrame:
    """The cells `cell_id, row, col, lat_deg, lon_deg` of a file's horizontal grid(s)."""
    return plan_grid(path).cells


@contextmanager
def open_grid(path: Path) -> Iterator[xr.Dataset]:
    """Open a NetCDF / HDF5 file lazily with xarray (CF-decoded); an unreadable file is a RawFormatError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # xarray warns when it falls back to cftime dates
        try:
            dataset = xr.open_dataset(path, engine="netcdf4", decode_timedelta=False,
                                      decode_times=xr.coders.CFDatetimeCoder(use_cftime=None))
        except (OSError, ValueError, RuntimeError, TypeError) as error:
            raise RawFormatError(path, None, f"unreadable NetCDF/HDF5 file ({error})") from error
    with dataset:
        yield dataset


def plan_grid(path: Path, variables: list[str] | None = None) -> GridFile:
    """Check everything about a file's grid variables except their values: axes, times, cells, units, dtype.

    `variables=None` chooses every variable on a (time, y, x) grid and records every other data
    variable as left out (see `layouts`); naming a variable that is in the file but not on such a
    grid is an error, and the variables not named are left out by request, unrecorded.
    """
    with open_grid(path) as dataset:
        layout = find_layout(path, dataset, listed=sniff(path) == "hdf5")
        axes = layout.placed
        for name in variables or []:
            if name in dataset.variables and name not in axes:
                reason = layout.reasons.get(name, f"a coordinate ({', '.join(map(str, dataset[name].dims))})")
                raise RawFormatError(path, None, f"/{name}: not on a (time, y, x) grid: {reason}")
        chosen = [name for name in axes if variables is None or name in variables]
        grids = sorted({axes[name][1:] for name in chosen})
        cells = {grid: _cells(dataset, *grid) for grid in grids}
        times = {axes[name][0]: read_times(path, dataset, axes[name][0]) for name in chosen}
        found = tuple(_variable(path, dataset, name, axes[name], times[axes[name][0]], cells[axes[name][1:]])
                      for name in chosen)
    cell_frame = (pd.concat(list(cells.values()), ignore_index=True) if cells
                  else _cell_frame([], *[np.zeros(0)] * 4))
    grouped = grouped_left_out(path) if variables is None and sniff(path) == "hdf5" else ()
    return GridFile(path, found, cell_frame.sort_values("cell_id", ignore_index=True), tuple(axes),
                    layout.left_out + grouped if variables is None else ())


def read_values(dataset: xr.Dataset, path: Path, variable: GridVariable, times: slice | np.ndarray,
                rows: slice) -> np.ndarray:
    """Float64 values (time, y, x) of `variable` at file time indices `times` and y rows `rows`.

    Only that slab is read from the file. Errors name the file index (t, y, x) of the value.
    """
    array = dataset[variable.name]
    time_dim, y_dim, _ = variable.dims
    try:
        data = array.isel({time_dim: times, y_dim: rows}).transpose(*variable.dims).values
    except (OSError, RuntimeError, ValueError) as error:
        raise RawFormatError(path, None, f"/{variable.name}: unreadable ({error})") from error
    return _mask(path, variable.name, array, data, np.arange(len(variable.order))[times], rows.start or 0)


def _variable(path: Path, dataset: xr.Dataset, name: str, dims: tuple[str, str, str],
              times: Times, cells: pd.DataFrame) -> GridVariable:
    variable = dataset[name]
    unit = variable.attrs.get("units")
    if not isinstance(unit, str) or not unit.strip():
        raise RawFormatError(path, None, f"/{name}: grid variable has no units attribute")
    if variable.dtype.kind not in "iuf":
        raise RawFormatError(path, None, f"/{name}: grid variable has non-numeric dtype {variable.dtype}")
    labels = times.labels
    order = np.argsort(labels.asi8 if times.calendar is None else labels.to_numpy(), kind="stable")
    shape = (dataset.sizes[dims[1]], dataset.sizes[dims[2]])
    return GridVariable(name, dims, unit.strip(), labels[order], times.calendar, order, cells, shape)


def _cells(dataset: xr.Dataset, ydim: str, xdim: str) -> pd.DataFrame:
    ny, nx = dataset.sizes[ydim], dataset.sizes[xdim]
    lat, lon = np.full((ny, nx), np.nan), np.full((ny, nx), np.nan)
    lat_name, lon_name = plane_coordinates(dataset, ydim, xdim)
    if (lat_name, lon_name) == (ydim, xdim):  # 1-D latitude and longitude: a regular grid
        yv, xv = dataset.variables[ydim], dataset.variables[xdim]
        lat, lon = np.meshgrid(yv.values.astype(float), xv.values.astype(float), indexing="ij")
    else:  # curvilinear: 2-D latitude / longitude variables on (y, x)
        lat = lat if lat_name is None else dataset.variables[lat_name].transpose(ydim, xdim).values.astype(float)
        lon = lon if lon_name is None else dataset.variables[lon_name].transpose(ydim, xdim).values.astype(float)
    width = max(4, len(str(max(ny, nx) - 1)))
    rows, cols = (grid.ravel() for grid in np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij"))
    ids = [f"{ydim}{r:0{width}d}_{xdim}{c:0{width}d}" for r, c in zip(rows, cols, strict=True)]
    return _cell_frame(ids, rows, cols, lat.ravel(), (lon.ravel() + 180.0) % 360.0 - 180.0)


def _cell_frame(ids: list[str], rows: np.ndarray, cols: np.ndarray, lat: np.ndarray,
                lon: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"cell_id": pd.array(ids, dtype="string"), "row": np.asarray(rows, np.int64),
                         "col": np.asarray(cols, np.int64), "lat_deg": np.asarray(lat, np.float64),
                         "lon_deg": np.asarray(lon, np.float64)})


def _mask(path: Path, name: str, variable: xr.DataArray, data: np.ndarray, t_index: np.ndarray,
          y_offset: int) -> np.ndarray:
    """Float64 values; undeclared default fills become NaN, undeclared sentinels are errors."""
    encoding = variable.encoding
    values = data.astype(np.float64)
    stored = np.dtype(encoding.get("dtype", data.dtype))
    if stored.kind == "f" and not {"_FillValue", "missing_value"} & set(encoding):
        values[data == data.dtype.type(netCDF4.default_fillvals[f"f{stored.itemsize}"])] = np.nan
    if data.dtype.kind == "f":
        sentinels = np.asarray(SENTINELS, dtype=data.dtype)
    else:
        info = np.iinfo(data.dtype)
        sentinels = np.asarray([s for s in SENTINELS if info.min <= s <= info.max], dtype=data.dtype)
    bad = np.isin(data, sentinels) | np.isinf(values)
    if bad.any():
        t, y, x = (int(i) for i in np.argwhere(bad)[0])
        raise RawFormatError(path, None, f"/{name}: unexpected sentinel {data[t, y, x]:g} at index "
                             f"({int(t_index[t])}, {y + y_offset}, {x}) (not declared as _FillValue or "
                             "missing_value)")
    return values
