"""Shared code of the `gridcells` annotator scripts: read the staged modalities and align them.

A query stages three things apart (see `data/README.md`): `entities.parquet` (cell ids, centres
and lon/lat bounds), the NetCDF grid `grid.nc` (its own lat/lon axes, the query's period) and
GeoTIFF layers under `imagery/` (in the mosaic's own projection). Aligning them is the analysis's
first step, done here the way the scripts' docstrings state:

- a grid cell is the NetCDF cell whose centre coordinates equal the entity's centre (to 1e-6
  degrees); its value over the period is the mean of its daily values;
- an image pixel belongs to a cell when the pixel's centre, projected to lon/lat, lies in the
  cell's bounds (west and south inclusive, east and north exclusive); nodata pixels (clouds, the
  mosaic's edge) are left out of every statistic but counted as the cell's pixels.
"""

from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import rasterio
from annotator_common import bootstrap, write_answer
from rasterio.warp import transform as warp_transform
from scipy.stats import theilslopes

DATA = Path("data")
BOUNDS = ["lon_west_deg", "lat_south_deg", "lon_east_deg", "lat_north_deg"]


def read_cells(scope: dict) -> pd.DataFrame:
    """The scope's cells (id, centre, bounds), indexed by cell id and sorted."""
    cells = pd.read_parquet(DATA / "entities.parquet")
    cells["cell_id"] = cells["cell_id"].astype(str)
    cells = cells[cells["cell_id"].isin(scope["entities"])]
    return cells.set_index("cell_id").sort_index()


def grid_means(cells: pd.DataFrame, variable: str, path: Path = DATA / "grid.nc",
               threshold: float | None = None) -> pd.Series:
    """Each cell's mean daily `variable` over the staged period, from the NetCDF grid.

    With `threshold`: the share of the cell's days on which the variable is at least that.
    """
    series = grid_series(cells, variable, path)
    if threshold is not None:
        series = (series >= threshold).astype(float).where(series.notna())
    return series.mean().rename(variable).rename_axis(cells.index.name)


def _index(axis: np.ndarray, value: float, name: str) -> int:
    position = int(np.argmin(np.abs(axis - value)))
    if abs(axis[position] - value) > 1e-6:
        raise ValueError(f"grid.nc has no {name} {value} (nearest {axis[position]})")
    return position


def pixels_by_cell(cells: pd.DataFrame, layer: str) -> pd.DataFrame:
    """Every pixel of `imagery/<layer>.tif` whose centre lies in a scope cell: cell_id, value.

    Nodata pixels keep a NaN value (they count as the cell's pixels, never in a statistic).
    """
    with rasterio.open(DATA / "imagery" / f"{layer}.tif") as image:
        values = image.read(1).astype(float)
        nodata, transform, crs = image.nodata, image.transform, image.crs
    if nodata is not None:
        values[values == nodata] = np.nan
    rows, cols = np.indices(values.shape)
    xs, ys = transform * (cols.ravel() + 0.5, rows.ravel() + 0.5)
    lon, lat = (np.asarray(v) for v in warp_transform(crs, "EPSG:4326", xs, ys))
    flat = values.ravel()
    parts = []
    for cell_id, box in cells[BOUNDS].iterrows():
        inside = ((lon >= box["lon_west_deg"]) & (lon < box["lon_east_deg"])
                  & (lat >= box["lat_south_deg"]) & (lat < box["lat_north_deg"]))
        parts.append(pd.DataFrame({"cell_id": cell_id, "value": flat[inside]}))
    return pd.concat(parts, ignore_index=True)


def zonal(cells: pd.DataFrame, layer: str) -> pd.DataFrame:
    """Per cell: `n_pixels` (pixel centres inside), `n_valid`, and the valid pixels' mean and sd."""
    pixels = pixels_by_cell(cells, layer)
    grouped = pixels.groupby("cell_id")["value"]
    out = pd.DataFrame({"n_pixels": grouped.size(), "n_valid": grouped.count(),
                        "mean": grouped.mean(), "sd": grouped.std(ddof=0)})
    return out.reindex(cells.index).fillna({"n_pixels": 0, "n_valid": 0})


def grid_series(cells: pd.DataFrame, variable: str, path: Path = DATA / "grid.nc",
                first: str | None = None, last: str | None = None) -> pd.DataFrame:
    """Each cell's daily `variable` from the NetCDF grid: dates (the grid's time axis) x cell ids.

    `first` / `last` (ISO dates, inclusive) keep only the days between them.
    """
    with netCDF4.Dataset(path) as grid:
        lat, lon = np.asarray(grid["lat"][:]), np.asarray(grid["lon"][:])
        time = grid["time"]
        stamps = netCDF4.num2date(time[:], time.units, getattr(time, "calendar", "standard"),
                                  only_use_cftime_datetimes=False)
        values = np.ma.filled(grid[variable][:].astype(float), np.nan)
    rows = [_index(lat, value, "lat") for value in cells["lat_deg"]]
    cols = [_index(lon, value, "lon") for value in cells["lon_deg"]]
    days = pd.DatetimeIndex([pd.Timestamp(s.year, s.month, s.day) for s in stamps], name="date")
    frame = pd.DataFrame(values[:, rows, cols], index=days, columns=cells.index)
    keep = np.ones(len(days), dtype=bool)
    if first is not None:
        keep &= days >= pd.Timestamp(first)
    if last is not None:
        keep &= days <= pd.Timestamp(last)
    return frame.loc[keep]


def theil_sen_slope(y: np.ndarray, x: np.ndarray) -> float:
    """Sen's (1968) slope: the median of the slopes between all pairs of points with distinct x."""
    return float(theilslopes(y, x)[0])


def column_correlations(first: pd.DataFrame, second: pd.DataFrame) -> pd.Series:
    """Pearson r between the same-named columns of two frames on the same index (rows with a NaN out)."""
    out = {}
    for column in first.columns:
        pair = pd.concat([first[column], second[column]], axis=1).dropna()
        out[column] = float(np.corrcoef(pair.iloc[:, 0], pair.iloc[:, 1])[0, 1]) if len(pair) > 2 else np.nan
    return pd.Series(out, name="r").rename_axis(first.columns.name)


def median_split_difference(values: np.ndarray, by: np.ndarray) -> float:
    """Mean of `values` where `by` is above its median minus the mean of the others."""
    high = by > np.median(by)
    if high.all() or not high.any():
        raise ValueError("one group is empty")
    return float(values[high].mean() - values[~high].mean())


def write_median_split(values: pd.Series, by: pd.Series, needs: str, min_contrast: float = 0.0,
                       quantity: str = "") -> None:
    """The median-split tasks' answer, over the cells where both series are defined.

    The difference of mean `values` of the cells above the median of `by` minus the others
    (`median_split_difference`), and its sampling uncertainty from 500 resamples of the cells
    (`annotator_common.bootstrap`: `numpy.random.default_rng(0)`, the median re-taken in each) in
    work/bootstrap.json. SystemExit (a discarded query) with fewer than 8 such cells (`needs`
    names what a cell needs), or when the difference is under `min_contrast` in absolute value
    (no `quantity` contrast to compare).
    """
    table = pd.DataFrame({"values": values, "by": by}).dropna()
    if len(table) < 8:
        raise SystemExit(f"only {len(table)} cells with {needs}")
    x, z = table["values"].to_numpy(), table["by"].to_numpy()
    value = median_split_difference(x, z)
    if abs(value) < min_contrast:
        raise SystemExit(f"no {quantity} contrast: {value:.4f}")
    write_answer(round(value, 6), bootstrap(len(x), lambda i: median_split_difference(x[i], z[i])))


def top_cell(values: pd.Series, min_lead: float) -> str:
    """The cell id with the largest value; SystemExit when fewer than two values are defined or
    the runner-up comes within `min_lead` (a share of the top value) of it (an ambiguous query)."""
    ranked = values.dropna().sort_values(ascending=False)
    if len(ranked) < 2:
        raise SystemExit(f"only {len(ranked)} cells with a value")
    if ranked.iloc[1] >= ranked.iloc[0] - min_lead * abs(ranked.iloc[0]):
        raise SystemExit(f"ambiguous: the runner-up {ranked.iloc[1]:.4g} is within {min_lead:.0%} "
                         f"of the top {ranked.iloc[0]:.4g}")
    return str(ranked.index[0])
