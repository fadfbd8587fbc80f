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

import json
import re
from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import rasterio
from rasterio.warp import transform as warp_transform

SCOPE_BLOCK = re.compile(r"## Scope\n.*?```json\n(?P<json>.*?)\n```", re.DOTALL)
DATA = Path("data")
WORK = Path("work")
BOUNDS = ["lon_west_deg", "lat_south_deg", "lon_east_deg", "lat_north_deg"]


def read_scope(prompt: Path = Path("prompt.md")) -> dict:
    """The JSON scope block (entity_key, entities, start, end) of the rendered prompt."""
    match = SCOPE_BLOCK.search(prompt.read_text())
    if match is None:
        raise ValueError(f"{prompt}: no '## Scope' block with a ```json fence")
    return json.loads(match.group("json"))


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
    with netCDF4.Dataset(path) as grid:
        lat, lon = np.asarray(grid["lat"][:]), np.asarray(grid["lon"][:])
        values = np.ma.filled(grid[variable][:].astype(float), np.nan)
    rows = [_index(lat, value, "lat") for value in cells["lat_deg"]]
    cols = [_index(lon, value, "lon") for value in cells["lon_deg"]]
    series = values[:, rows, cols]
    if threshold is not None:
        series = np.where(np.isnan(series), np.nan, (series >= threshold).astype(float))
    means = np.nanmean(series, axis=0)
    return pd.Series(means, index=cells.index, name=variable)


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


def ols(y: np.ndarray, *columns: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of y on an intercept and the columns (intercept first)."""
    design = np.column_stack([np.ones_like(y), *columns])
    return np.linalg.lstsq(design, y, rcond=None)[0]


def bootstrap(n: int, statistic, replicates: int = 500, seed: int = 0) -> list[float]:
    """`statistic(indices)` on resamples of n entities with replacement (undefined ones skipped)."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(replicates):
        try:
            value = statistic(rng.integers(0, n, n))
        except (ValueError, np.linalg.LinAlgError, FloatingPointError):
            continue
        if np.isfinite(value):
            values.append(float(value))
    return values


def write_checkpoint(name: str, frame: pd.DataFrame) -> None:
    """Write a checkpoint the scorer compares with an agent's (`work/<name>`)."""
    WORK.mkdir(exist_ok=True)
    frame.reset_index().to_parquet(WORK / name, index=False)


def write_answer(answer: object, replicates: list[float] | None = None) -> None:
    """Write work/answer.json (and work/bootstrap.json when replicates are given)."""
    WORK.mkdir(exist_ok=True)
    (WORK / "answer.json").write_text(json.dumps({"answer": answer}, indent=2))
    if replicates is not None:
        (WORK / "bootstrap.json").write_text(json.dumps({"values": replicates}))
