"""Synthetic imagery mosaic: relief and NDVI GeoTIFF tiles on a regular grid over a bounding box.

Writes under `out_dir` what `stages.sources.imagery` reads: a mosaic of square tiles of
`tile_px` x `tile_px` pixels of `pixel_m` metres in `crs` (default EPSG:5070, CONUS Albers, over
the contiguous US), like the tiled national products (NLCD, SRTM, MODIS NDVI). Tile (r, c) is the
r-th row from the top and c-th column from the left; the grid starts at the box's top-left corner
snapped to whole pixels and has as many whole tiles as needed to cover the box::

    r00c00_relief.tif              elevation [m]
    r00c00_ndvi_<YYYYMMDD>.tif     NDVI [1] per date

The fields cover the whole box (there is no coastline); cloudy NDVI pixels are nodata -9999. Float32, LZW with the
floating-point predictor, 16-multiple square blocks, band description, unit and (NDVI) a DATE tag;
no TIFF date-time tag and no side-cars, so the same params give byte-identical files. The fields
(`fields`) are defined in projected metres and lon/lat, so tiles agree along their edges and
every profile samples the same landscape at its own resolution; per-pixel noise is seeded per tile.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from rasterio.crs import CRS
from rasterio.warp import transform as transform_points

from stages.synthesize.imagery import fields as model

NODATA = -9999.0
DEFAULT_DATES = ("20200115", "20200415", "20200715", "20201015")  # mid-month, one per season
CONUS_ALBERS_M = (-2_400_000.0, 200_000.0, 2_300_000.0, 3_200_000.0)  # EPSG:5070 box of CONUS
MAX_TILES = 10_000


class Params(BaseModel):
    """Parameters of `synthesize@imagery`."""

    model_config = ConfigDict(extra="forbid")
    seed: int = 42
    pixel_m: float = Field(gt=0)
    tile_px: int = Field(ge=16, le=4096, multiple_of=16)
    crs: str = "EPSG:5070"
    bounds_m: tuple[float, float, float, float] = CONUS_ALBERS_M
    dates: list[str] = Field(default_factory=lambda: list(DEFAULT_DATES))
    cloud_fraction: float = Field(0.1, ge=0.0, le=0.5)

    @field_validator("crs")
    @classmethod
    def _projected_in_metres(cls, value: str) -> str:
        crs = CRS.from_user_input(value)
        if not crs.is_projected or crs.linear_units_factor[1] != 1.0:
            raise ValueError(f"crs {value!r} must be a projected CRS in metres")
        return value

    @field_validator("dates")
    @classmethod
    def _dates_are_days(cls, value: list[str]) -> list[str]:
        for text in value:
            if not re.fullmatch(r"\d{8}", text):
                raise ValueError(f"date {text!r} must be YYYYMMDD")
            dt.datetime.strptime(text, "%Y%m%d")  # raises ValueError on an impossible date
        if len(set(value)) != len(value):
            raise ValueError("dates must be unique")
        return sorted(value)

    @model_validator(mode="after")
    def _bounds_hold_a_grid(self) -> Params:
        xmin, ymin, xmax, ymax = self.bounds_m
        if not (xmin < xmax and ymin < ymax):
            raise ValueError(f"bounds_m {self.bounds_m} must be (xmin, ymin, xmax, ymax) with min < max")
        grid = MosaicGrid.of(self)
        if grid.n_rows * grid.n_cols > MAX_TILES:
            raise ValueError(f"{grid.n_rows} x {grid.n_cols} tiles exceed {MAX_TILES}: raise pixel_m or tile_px")
        return self


@dataclass(frozen=True)
class MosaicGrid:
    """The tile grid: top-left corner (metres), pixel size, tile size and tile counts."""

    left: float
    top: float
    pixel_m: float
    tile_px: int
    n_rows: int
    n_cols: int

    @classmethod
    def of(cls, params: Params) -> MosaicGrid:
        """The grid that covers `params.bounds_m` with whole tiles."""
        xmin, ymin, xmax, ymax = params.bounds_m
        size, tile_m = params.pixel_m, params.pixel_m * params.tile_px
        left, top = math.floor(xmin / size) * size, math.ceil(ymax / size) * size
        return cls(left, top, size, params.tile_px, n_rows=math.ceil((top - ymin) / tile_m),
                   n_cols=math.ceil((xmax - left) / tile_m))

    def tile_id(self, row: int, col: int) -> str:
        """``r<row>c<col>``, zero-padded to the widest index (at least two digits)."""
        width = max(2, len(str(max(self.n_rows, self.n_cols) - 1)))
        return f"r{row:0{width}d}c{col:0{width}d}"

    def tile(self, row: int, col: int) -> tuple[Affine, np.ndarray, np.ndarray]:
        """A tile's affine and the coordinates of its pixel centres (columns, rows)."""
        tile_m = self.tile_px * self.pixel_m
        left, top = self.left + col * tile_m, self.top - row * tile_m
        centres = (np.arange(self.tile_px) + 0.5) * self.pixel_m
        return Affine(self.pixel_m, 0, left, 0, -self.pixel_m, top), left + centres, top - centres


def write(out_dir: Path, params: Params) -> None:
    """Generate every tile's relief and per-date NDVI under `out_dir`."""
    grid = MosaicGrid.of(params)
    rng = np.random.default_rng([params.seed, 0])
    relief_waves = model.Waves.draw(rng, model.RELIEF_WAVES, *model.RELIEF_WAVELENGTH_M, 0.5)
    cover_waves = model.Waves.draw(rng, model.COVER_WAVES, *model.COVER_WAVELENGTH_M, 0.3)
    relief_waves, cover_waves = relief_waves.resolved(params.pixel_m), cover_waves.resolved(params.pixel_m)
    days = [dt.datetime.strptime(text, "%Y%m%d").date() for text in params.dates]
    clouds = [model.Clouds.draw(np.random.default_rng([params.seed, 3, number]), params.cloud_fraction)
              for number in range(len(days))]
    out_dir.mkdir(parents=True, exist_ok=True)
    for row in range(grid.n_rows):
        for col in range(grid.n_cols):
            affine, xs, ys = grid.tile(row, col)
            px, py = np.meshgrid(xs, ys)
            lons, lats = (np.asarray(v).reshape(px.shape)
                          for v in transform_points(params.crs, "EPSG:4326", px.ravel(), py.ravel()))
            fractal = relief_waves.evaluate(xs, ys)
            elevation = np.round(model.relief(lons, lats, fractal), 2)
            name = grid.tile_id(row, col)
            _write_tile(out_dir / f"{name}_relief.tif", params, affine, elevation,
                        "relief", "m", None)
            cover = np.tanh(cover_waves.evaluate(xs, ys))
            for number, (text, day) in enumerate(zip(params.dates, days, strict=True)):
                noise = np.random.default_rng([params.seed, 1, row, col, number]).normal(0, 0.02, px.shape)
                value = np.round(model.ndvi(lons, lats, elevation, fractal, cover, day.timetuple().tm_yday, noise), 4)
                if clouds[number] is not None:
                    value = np.where(clouds[number].mask(xs, ys), NODATA, value)
                _write_tile(out_dir / f"{name}_ndvi_{text}.tif", params, affine, value, "ndvi", "1", day)


def _write_tile(path: Path, params: Params, affine: Affine, values: np.ndarray, variable: str,
                unit: str, day: dt.date | None) -> None:
    block = min(params.tile_px, 256)
    profile = {"driver": "GTiff", "width": params.tile_px, "height": params.tile_px, "count": 1,
               "dtype": "float32", "crs": params.crs, "transform": affine, "nodata": NODATA,
               "compress": "lzw", "predictor": 3, "tiled": True, "blockxsize": block,
               "blockysize": block}
    with rasterio.Env(GDAL_PAM_ENABLED="NO"), rasterio.open(path, "w", **profile) as dataset:
        dataset.write(values.astype(np.float32), 1)
        dataset.set_band_description(1, variable)
        dataset.set_band_unit(1, unit)
        if day is not None:
            dataset.update_tags(1, DATE=day.isoformat())
