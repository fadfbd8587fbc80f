"""Where each variable of a gridded file goes: onto a (time, y, x) grid, or left out with its reason.

A variable is placed on a grid when it has exactly three dimensions, time (T) and two horizontal ones:
- y (Y) and x (X), recognised from their coordinate variables (CF `axis`, `standard_name`, `units`,
  or the usual names `lat`/`y`, `lon`/`x`), in any order: a regular grid, or a curvilinear one
  whose 2-D latitude / longitude lie on (y, x); or
- any two dimensions on which 2-D latitude and longitude variables lie (CF `standard_name`,
  `units` or the usual names; CMIP6 ocean and sea-ice `(time, j, i)` name them in the variable's
  `coordinates` attribute): a curvilinear grid, y and x in the order of the latitude's dimensions.

Every other data variable is left out, and none silently. Variables that describe others are not
data: those a CF `bounds`, `climatology`, `coordinates`, `grid_mapping`, `formula_terms` or
`cell_measures` attribute names, identifiers with a `cf_role`, and the 2-D latitude / longitude of
a placed grid (cell bounds such as `lat_bnds` or `vertices_latitude` are not needed for the centres
the `cells` table holds, and are not read). Nor are static numeric 1-D / 2-D variables (no time
axis) of an HDF5-based (NetCDF-4) file outside a discrete sampling geometry: the `datasets` table
lists them and the `datasets` param reads them.
Each other variable becomes a `LeftOut` naming the file, the variable, its dimensions and why:
- a variable of a CF discrete sampling geometry (a `featureType` such as `timeSeries`): stations
  and other features are points, not cells of a grid;
- a series per station, `(time, station)` or `(station, time)` with one latitude / longitude per
  station, in a file without `featureType`: likewise;
- a vertical axis, as in 4-D `(time, lev, lat, lon)`: the `grid` table has no level key (a level
  per row would change its keys for every file);
- `(time, a, b)` without 2-D latitude / longitude on `(a, b)`, or any other set of dimensions;
- a static field of a NetCDF-3 file, or one `datasets` cannot read (a scalar, 3+ dimensions, text);
- any variable in a group below the root of a NetCDF-4 file (`/forcing/tas`): xarray opens one
  group, the root, and grids are placed from it only (`grouped_left_out`).
A variable named in the `variables` param that is not placed is an error instead (see `plan_grid`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import netCDF4
import xarray as xr

from stages.sources.hdf.times import is_cftime
from stages.tables import LeftOut

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
VERTICAL = ({"lev", "level", "levels", "plev", "olevel", "depth", "deptht", "height", "alt", "altitude", "z",
             "bottom_top", "isobaric"},
            {"air_pressure", "depth", "height", "altitude", "model_level_number",
             "atmosphere_hybrid_sigma_pressure_coordinate", "atmosphere_hybrid_height_coordinate",
             "atmosphere_sigma_coordinate", "ocean_sigma_coordinate", "ocean_s_coordinate",
             "ocean_sigma_z_coordinate", "ocean_double_sigma_coordinate"},
            frozenset({"pa", "hpa", "mbar", "millibar", "bar", "dbar", "decibar"}))
REFERENCES = ("bounds", "climatology", "coordinates", "grid_mapping", "formula_terms", "cell_measures")


@dataclass(frozen=True)
class Layout:
    """The data variables of one file: the placed ones with their (time, y, x) dims, the others' reasons."""

    placed: dict[str, tuple[str, str, str]]
    reasons: dict[str, str]  # every data variable not placed (descriptive ones too) -> why
    left_out: tuple[LeftOut, ...]  # the data among them: what `read` records, by variable name


def find_layout(path: Path, dataset: xr.Dataset, listed: bool) -> Layout:
    """Place every data variable of `dataset` or say why not; `listed`: an HDF5-based file (see module)."""
    placed: dict[str, tuple[str, str, str]] = {}
    reasons: dict[str, str] = {}
    for name in sorted(map(str, dataset.data_vars)):
        dims = grid_axes(dataset, name)
        if dims is not None:
            placed[name] = dims
        else:
            reasons[name] = _reason(dataset, name)
    skipped = _descriptive(dataset) | {
        coordinate for _, y, x in placed.values() for coordinate in plane_coordinates(dataset, y, x) if coordinate}
    if listed and "featureType" not in dataset.attrs:
        skipped |= {name for name in reasons if _listed_static(dataset, name)}
    left_out = tuple(LeftOut(path, name, f"/{name}: not read, {reason}", int(dataset[name].size))
                     for name, reason in reasons.items() if name not in skipped)
    return Layout(placed, reasons, left_out)


def grouped_left_out(path: Path) -> tuple[LeftOut, ...]:
    """Every variable in a group below the root of a NetCDF-4 file, as left out (dimension coordinates aside)."""
    found: list[LeftOut] = []
    with netCDF4.Dataset(path) as root:
        pending = list(root.groups.values())
        while pending:
            group = pending.pop(0)
            pending += list(group.groups.values())
            for name, variable in sorted(group.variables.items()):
                if name in group.dimensions and variable.dimensions == (name,):
                    continue
                where = f"{group.path}/{name}"
                shown = f"({', '.join(variable.dimensions)})" if variable.dimensions else "(a scalar)"
                found.append(LeftOut(path, where, f"{where}: not read, {shown} in group {group.path}: grids are "
                                     "placed from the root group only", int(variable.size)))
    return tuple(sorted(found, key=lambda record: record.column))


def say_left_out(records: Iterable[LeftOut]) -> None:
    """One line on stderr per variable left out (the `quarantine` table keeps them too)."""
    for record in records:
        print(f"hdf: {record.path}: {record.problem}", file=sys.stderr)


def grid_axes(dataset: xr.Dataset, name: str) -> tuple[str, str, str] | None:
    """(time dim, y dim, x dim) when the variable lies on a (time, y, x) grid, regular or curvilinear."""
    dims = [str(dim) for dim in dataset[name].dims]
    kinds = {axis(dataset, dim): dim for dim in dims}
    if len(dims) != 3 or "T" not in kinds:
        return None
    if set(kinds) == {"T", "Y", "X"}:
        return kinds["T"], kinds["Y"], kinds["X"]
    plane = [dim for dim in dims if dim != kinds["T"]]
    if len(plane) != 2:
        return None
    lat, lon = plane_coordinates(dataset, *plane)
    if lat is None or lon is None:
        return None
    if dataset.variables[lat].ndim == 1:  # 1-D latitude / longitude on dimensions named unlike Y / X
        return kinds["T"], lat, lon
    y, x = (str(dim) for dim in dataset.variables[lat].dims)
    return kinds["T"], y, x


def plane_coordinates(dataset: xr.Dataset, ydim: str, xdim: str) -> tuple[str | None, str | None]:
    """Names of the latitude and longitude of the cells on (ydim, xdim): 1-D dimension coordinates, or 2-D.

    2-D ones are looked for among every variable on exactly these two dimensions, by name order,
    the last match kept.
    """
    yv, xv = dataset.variables.get(ydim), dataset.variables.get(xdim)
    if yv is not None and xv is not None and matches(yv, ydim, LATITUDE) and matches(xv, xdim, LONGITUDE):
        return ydim, xdim
    lat = lon = None
    for name in sorted(map(str, dataset.variables)):
        variable = dataset.variables[name]
        if variable.ndim == 2 and set(variable.dims) == {ydim, xdim}:
            lat = name if matches(variable, name, LATITUDE) else lat
            lon = name if matches(variable, name, LONGITUDE) else lon
    return lat, lon


def axis(dataset: xr.Dataset, dim: str) -> str | None:
    """T, Y or X for a dimension recognised from its coordinate variable (or its name), else None."""
    variable = dataset.variables.get(dim)
    if variable is not None and (variable.dtype.kind == "M" or is_cftime(variable.values)):
        return "T"
    declared = str(variable.attrs.get("axis", "")).upper() if variable is not None else ""
    if declared in AXES:
        return declared
    return next((found for found, rule in AXES.items() if matches(variable, dim, rule)), None)


def matches(variable: xr.Variable | None, name: str, rule: tuple) -> bool:
    """The variable (or, with none, its name) fits a rule of names, standard names and units."""
    names, standards, units = rule
    attrs = variable.attrs if variable is not None else {}
    unit = str(attrs.get("units", "")).strip().lower().replace(" ", "_")
    return name.lower() in names or str(attrs.get("standard_name", "")) in standards or unit in units


def _reason(dataset: xr.Dataset, name: str) -> str:
    dims = [str(dim) for dim in dataset[name].dims]
    shown = f"({', '.join(dims)})" if dims else "(a scalar)"
    kinds = [axis(dataset, dim) for dim in dims]
    feature = dataset.attrs.get("featureType")
    if feature is not None:
        return (f"{shown} of a CF discrete sampling geometry (featureType {feature}): its features are "
                "points, not grid cells")
    if "T" not in kinds:
        return f"static {shown}: no time axis"
    vertical = [dim for dim in dims if _vertical(dataset, dim)]
    if vertical:
        return f"{shown} has a vertical axis ({vertical[0]}): the grid table has no level key"
    stations = [dim for dim, kind in zip(dims, kinds, strict=True) if kind is None and _points(dataset, dim)]
    if stations:
        return f"{shown}: a series per station along {stations[0]} (1-D latitude/longitude), not a grid"
    if len(dims) == 3:
        plane = ", ".join(dim for dim, kind in zip(dims, kinds, strict=True) if kind != "T")
        return f"{shown}: no latitude/longitude for ({plane})"
    return f"{shown}: not a (time, y, x) grid"


def _vertical(dataset: xr.Dataset, dim: str) -> bool:
    variable = dataset.variables.get(dim)
    attrs = variable.attrs if variable is not None else {}
    return (str(attrs.get("axis", "")).upper() == "Z" or "positive" in attrs
            or matches(variable, dim, VERTICAL))


def _points(dataset: xr.Dataset, dim: str) -> bool:
    """Whether 1-D latitude and longitude lie on `dim` (one per station)."""
    on_dim = [(str(n), v) for n, v in dataset.variables.items() if v.dims == (dim,)]
    return (any(matches(v, n, LATITUDE) for n, v in on_dim)
            and any(matches(v, n, LONGITUDE) for n, v in on_dim))


def _descriptive(dataset: xr.Dataset) -> set[str]:
    """Variables named by another's CF attributes (bounds, grid mapping, ...) and identifiers (`cf_role`)."""
    names = set()
    for name, variable in dataset.variables.items():
        if "cf_role" in variable.attrs:
            names.add(str(name))
        for key in REFERENCES:
            text = variable.attrs.get(key, variable.encoding.get(key))
            if isinstance(text, str):  # "area: areacello", "a: ap b: b ps: ps", "crs: x y": colons dropped
                names |= {token.rstrip(":") for token in text.split()}
    return names


def _listed_static(dataset: xr.Dataset, name: str) -> bool:
    """A numeric 1-D / 2-D array with no time axis: `datasets` lists it, the `datasets` param reads it."""
    variable = dataset[name]
    return (variable.ndim in (1, 2) and variable.dtype.kind in "iuf"
            and all(axis(dataset, str(dim)) != "T" for dim in variable.dims))
