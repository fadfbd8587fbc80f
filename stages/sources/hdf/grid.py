"""Gridded NetCDF (classic or NetCDF-4) and HDF5 with dimension scales, read via xarray.

A grid variable has exactly three dimensions, recognised as time (T), y (Y) and x (X) from their
coordinate variables (CF `axis`, `standard_name`, `units`, or the usual names `time`, `lat`/`y`,
`lon`/`x`), in any order. Values equal to `_FillValue` / `missing_value` (or, with neither declared,
the NetCDF default fill of a float variable) become null; any other common sentinel is an error.
Times are CF-decoded; model calendars (noleap, 360_day, ...) map field by field onto UTC timestamps,
the Julian calendar is converted. Longitudes are normalised to [-180, 180).

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

import cftime
import netCDF4
import numpy as np
import pandas as pd
import xarray as xr

from stages.tables import RawFormatError

SENTINELS = (-999.0, -9999.0, -99999.0, 1e20, 1e30)
LAT_UNITS = frozenset({"degrees_north", "degree_north", "degrees_n", "degree_n", "degreesn", "degreen"})
LON_UNITS = frozenset({"degrees_east", "degree_east", "degrees_e", "degree_e", "degreese", "degreee"})
AXES = {  # axis -> (dimension names, standard names, units)
    "T": ({"time", "t"}, {"time"}, frozenset()),
    "Y": ({"lat", "latitude", "y", "rlat", "yc", "south_north", "nlat"},
          {"latitude", "grid_latitude", "projection_y_coordinate"}, LAT_UNITS),
    "X": ({"lon", "longitude", "x", "rlon", "xc", "west_east", "nlon"},
          {"longitude", "grid_longitude", "projection_x_coordinate"}, LON_UNITS),
}
LATITUDE = ({"lat", "latitude", "nav_lat"}, {"latitude"}, LAT_UNITS)
LONGITUDE = ({"lon", "longitude", "nav_lon"}, {"longitude"}, LON_UNITS)
REAL_CALENDARS = frozenset({"julian", "standard", "gregorian"})  # converted, not relabelled


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class GridVariable:
    """One (time, y, x) variable of a file whose metadata passed every check; values are read later."""

    name: str
    dims: tuple[str, str, str]  # (time, y, x) dimension names
    unit: str
    times: pd.DatetimeIndex  # UTC, sorted
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

    `variables=None` chooses every variable on a (time, y, x) grid; naming a variable that is in the
    file but not on such a grid is an error.
    """
    with open_grid(path) as dataset:
        axes = {name: found for name in sorted(map(str, dataset.data_vars))
                if (found := _grid_axes(dataset, name)) is not None}
        for name in variables or []:
            if name in dataset.variables and name not in axes:
                raise RawFormatError(path, None, f"/{name}: not on a (time, y, x) grid (dimensions "
                                     f"{dataset[name].dims})")
        chosen = [name for name in axes if variables is None or name in variables]
        grids = sorted({axes[name][1:] for name in chosen})
        cells = {grid: _cells(dataset, *grid) for grid in grids}
        times = {axes[name][0]: _utc_times(path, dataset, axes[name][0]) for name in chosen}
        found = tuple(_variable(path, dataset, name, axes[name], times[axes[name][0]], cells[axes[name][1:]])
                      for name in chosen)
    cell_frame = (pd.concat(list(cells.values()), ignore_index=True) if cells
                  else _cell_frame([], *[np.zeros(0)] * 4))
    return GridFile(path, found, cell_frame.sort_values("cell_id", ignore_index=True), tuple(axes))


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
              times: pd.DatetimeIndex, cells: pd.DataFrame) -> GridVariable:
    variable = dataset[name]
    unit = variable.attrs.get("units")
    if not isinstance(unit, str) or not unit.strip():
        raise RawFormatError(path, None, f"/{name}: grid variable has no units attribute")
    if variable.dtype.kind not in "iuf":
        raise RawFormatError(path, None, f"/{name}: grid variable has non-numeric dtype {variable.dtype}")
    order = np.argsort(times.asi8, kind="stable")
    shape = (dataset.sizes[dims[1]], dataset.sizes[dims[2]])
    return GridVariable(name, dims, unit.strip(), times[order], order, cells, shape)


def _matches(variable: xr.Variable | None, dim: str, rule: tuple) -> bool:
    names, standards, units = rule
    attrs = variable.attrs if variable is not None else {}
    unit = str(attrs.get("units", "")).strip().lower().replace(" ", "_")
    return dim.lower() in names or str(attrs.get("standard_name", "")) in standards or unit in units


def _axis(dataset: xr.Dataset, dim: str) -> str | None:
    variable = dataset.variables.get(dim)
    if variable is not None and (variable.dtype.kind == "M" or _is_cftime(variable.values)):
        return "T"
    declared = str(variable.attrs.get("axis", "")).upper() if variable is not None else ""
    if declared in AXES:
        return declared
    return next((axis for axis, rule in AXES.items() if _matches(variable, dim, rule)), None)


def _grid_axes(dataset: xr.Dataset, name: str) -> tuple[str, str, str] | None:
    """(time dim, y dim, x dim) when the variable lies on a (time, y, x) grid."""
    dims = [str(dim) for dim in dataset[name].dims]
    kinds = {_axis(dataset, dim): dim for dim in dims}
    if len(dims) != 3 or set(kinds) != {"T", "Y", "X"}:
        return None
    return kinds["T"], kinds["Y"], kinds["X"]


def _is_cftime(values: np.ndarray) -> bool:
    return values.dtype == object and values.size > 0 and isinstance(values.flat[0], cftime.datetime)


def _utc_times(path: Path, dataset: xr.Dataset, dim: str) -> pd.DatetimeIndex:
    variable = dataset.variables.get(dim)
    values = variable.values if variable is not None else np.array([])
    if values.dtype.kind == "M":
        stamps = pd.DatetimeIndex(values)
    elif _is_cftime(values):
        stamps = pd.DatetimeIndex([_gregorian(path, dim, value) for value in values])
    else:
        units = None if variable is None else variable.attrs.get("units", variable.encoding.get("units"))
        problem = ("has no coordinate variable" if variable is None else "has no units attribute"
                   if units is None else f"has units {units!r}, not CF 'UNIT since DATE'")
        raise RawFormatError(path, None, f"/{dim}: time coordinate {problem}")
    if stamps.isna().any():
        raise RawFormatError(path, None, f"/{dim}: missing time value at index {np.argmax(stamps.isna())}")
    duplicated = stamps.duplicated()
    if duplicated.any():
        index = int(np.argmax(duplicated))
        first = int(np.argmax(stamps == stamps[index]))
        raise RawFormatError(path, None, f"/{dim}: duplicated time {stamps[index]} at index {index} "
                             f"(first at index {first})")
    return stamps.as_unit("us").tz_localize("UTC")


def _gregorian(path: Path, dim: str, value: cftime.datetime) -> pd.Timestamp:
    if value.calendar in REAL_CALENDARS:
        value = value.change_calendar("proleptic_gregorian")
    try:
        return pd.Timestamp(value.year, value.month, value.day, value.hour, value.minute,
                            value.second, value.microsecond)
    except ValueError as error:
        raise RawFormatError(path, None, f"/{dim}: date {value} of calendar {value.calendar!r} has no "
                             "Gregorian equivalent") from error


def _cells(dataset: xr.Dataset, ydim: str, xdim: str) -> pd.DataFrame:
    ny, nx = dataset.sizes[ydim], dataset.sizes[xdim]
    lat, lon = np.full((ny, nx), np.nan), np.full((ny, nx), np.nan)
    yv, xv = dataset.variables.get(ydim), dataset.variables.get(xdim)
    if yv is not None and xv is not None and _matches(yv, ydim, LATITUDE) and _matches(xv, xdim, LONGITUDE):
        lat, lon = np.meshgrid(yv.values.astype(float), xv.values.astype(float), indexing="ij")
    else:  # curvilinear: 2-D latitude / longitude variables on (y, x)
        for name in sorted(map(str, dataset.variables)):
            variable = dataset.variables[name]
            if variable.ndim == 2 and set(variable.dims) == {ydim, xdim}:
                values = variable.transpose(ydim, xdim).values.astype(float)
                lat = values if _matches(variable, name, LATITUDE) else lat
                lon = values if _matches(variable, name, LONGITUDE) else lon
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
