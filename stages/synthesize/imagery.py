"""Synthetic georeferenced tiles over the entities of a domain: relief and NDVI GeoTIFFs.

Writes under `out_dir` what `stages.sources.imagery` reads, one square tile per entity on a
grid of `pixel_m` metres in `crs` (default EPSG:5070, CONUS Albers), the entity's point inside
the tile's centre pixel (row = col = tile_px // 2)::

    <entity>_relief.tif              elevation [m]
    <entity>_ndvi_<YYYYMMDD>.tif     NDVI [1] per date, cloudy pixels = nodata -9999

Float32, LZW with the floating-point predictor, 16-multiple square blocks, band description,
unit and (NDVI) a DATE tag; no TIFF date-time tag and no side-cars, so the same params give
byte-identical files. Entities come from `entities_file` (CSV ``entity_id,lon,lat`` written by
another generator; the first `n_entities` ids in sorted order) or are drawn over CONUS. The
fields are described in `imagery_fields`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import zlib
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from pydantic import BaseModel, ConfigDict, Field, field_validator
from rasterio.crs import CRS
from rasterio.warp import transform as transform_points

from stages.synthesize import imagery_fields as model
from stages.tables import RawFormatError

NODATA = -9999.0
LONGEST_WAVE_M = 50_000.0  # relief waves from 4 pixels to this wavelength
DEFAULT_DATES = ("20200115", "20200415", "20200715", "20201015")  # mid-month, one per season
ENTITY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
CONUS = np.array([  # coarse outline (lon, lat) used to keep drawn points on land
    (-124.7, 48.4), (-124.1, 46.2), (-124.5, 42.8), (-123.8, 39.8), (-122.4, 37.2), (-120.6, 34.6),
    (-117.1, 32.5), (-114.7, 32.7), (-111.1, 31.3), (-108.2, 31.3), (-106.5, 31.8), (-104.5, 29.6),
    (-103.1, 29.0), (-101.4, 29.8), (-99.5, 27.5), (-97.4, 25.9), (-97.4, 27.8), (-94.0, 29.6),
    (-90.0, 29.1), (-89.0, 30.3), (-85.0, 29.7), (-83.0, 29.0), (-82.7, 27.5), (-81.0, 25.2),
    (-80.1, 25.8), (-80.6, 28.5), (-81.4, 30.7), (-79.0, 33.5), (-76.0, 35.0), (-76.3, 37.0),
    (-74.0, 39.7), (-71.0, 41.5), (-70.0, 41.8), (-70.7, 43.1), (-67.0, 44.8), (-67.8, 47.1),
    (-69.2, 47.4), (-71.5, 45.0), (-74.7, 45.0), (-76.3, 44.2), (-79.0, 43.3), (-82.5, 41.8),
    (-83.5, 46.1), (-89.6, 48.0), (-95.2, 49.0), (-123.0, 49.0),
])


class Params(BaseModel):
    """Parameters of `synthesize@imagery`."""

    model_config = ConfigDict(extra="forbid")
    seed: int = 42
    n_entities: int = Field(ge=1, le=100_000)
    tile_px: int = Field(ge=16, le=4096, multiple_of=16)
    pixel_m: float = Field(30.0, gt=0)
    crs: str = "EPSG:5070"
    entities_file: str | None = None
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


def write(out_dir: Path, params: Params) -> None:
    """Generate the relief and NDVI tiles of every entity under `out_dir`."""
    if params.entities_file is not None:
        chosen = read_entities(Path(params.entities_file))
        entities = {key: chosen[key] for key in sorted(chosen)[: params.n_entities]}
    else:
        entities = draw_entities(params.seed, params.n_entities)
    rng = np.random.default_rng([params.seed, 0])
    relief_waves = model.Waves.draw(rng, model.RELIEF_WAVES, 4 * params.pixel_m, LONGEST_WAVE_M, 0.5)
    cover_waves = model.Waves.draw(rng, model.COVER_WAVES, 3 * params.pixel_m, 3000.0, 0.3)
    out_dir.mkdir(parents=True, exist_ok=True)
    for entity, (lon, lat) in sorted(entities.items()):
        affine, xs, ys = tile_grid(params, lon, lat)
        px, py = np.meshgrid(xs, ys)
        lons, lats = (np.asarray(v).reshape(px.shape)
                      for v in transform_points(params.crs, "EPSG:4326", px.ravel(), py.ravel()))
        fractal = relief_waves.evaluate(xs, ys)
        elevation = np.round(model.relief(lons, lats, fractal), 2)
        _write_tile(out_dir / f"{entity}_relief.tif", params, affine, elevation, "relief", "m", None)
        cover = np.tanh(cover_waves.evaluate(xs, ys))
        for number, text in enumerate(params.dates):
            day = dt.datetime.strptime(text, "%Y%m%d").date()
            # seeded by the entity id, so an entity's tiles do not depend on which others are drawn
            local = np.random.default_rng([params.seed, 1, zlib.crc32(entity.encode()), number])
            noise = local.normal(0, 0.02, px.shape)
            value = model.ndvi(lons, lats, elevation, fractal, cover, day.timetuple().tm_yday, noise)
            clouds = model.cloud_mask(local, px.shape, params.pixel_m, params.cloud_fraction)
            value = np.where(clouds, NODATA, np.round(value, 4))
            _write_tile(out_dir / f"{entity}_ndvi_{text}.tif", params, affine, value, "ndvi", "1", day)


def draw_entities(seed: int, n: int) -> dict[str, tuple[float, float]]:
    """`n` seeded points over CONUS land, ids ``pt0000``, ``pt0001``, ... -> (lon, lat)."""
    rng = np.random.default_rng([seed, 2])
    points: list[tuple[float, float]] = []
    while len(points) < n:
        lon, lat = rng.uniform(-125, -66.5), rng.uniform(24.5, 49.5)
        if _inside(CONUS, lon, lat):
            points.append((round(lon, 5), round(lat, 5)))
    return {f"pt{i:04d}": point for i, point in enumerate(points)}


def read_entities(path: Path) -> dict[str, tuple[float, float]]:
    """Entities from a CSV ``entity_id,lon,lat`` (CRLF accepted); errors name file and line."""
    if not path.is_file():
        raise RawFormatError(path, None, "entities file does not exist")
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if not lines:
        raise RawFormatError(path, 1, "file is empty")
    if [f.strip() for f in lines[0].split(",")] != ["entity_id", "lon", "lat"]:
        raise RawFormatError(path, 1, f"header must be 'entity_id,lon,lat', found {lines[0][:60]!r}")
    entities: dict[str, tuple[float, float]] = {}
    first: dict[str, int] = {}
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 3:
            raise RawFormatError(path, number, f"expected 3 ','-separated fields, found {len(fields)}")
        entity, lon, lat = fields[0], _number(path, number, fields[1]), _number(path, number, fields[2])
        if not ENTITY_ID.fullmatch(entity):
            raise RawFormatError(path, number, f"entity_id {entity!r} cannot be used in a file name")
        if entity in first:
            raise RawFormatError(path, number, f"duplicated entity_id {entity} (first at line "
                                 f"{first[entity]})")
        if not (-180 <= lon <= 180 and -90 <= lat <= 90):
            raise RawFormatError(path, number, f"lon/lat ({lon}, {lat}) out of range")
        first[entity], entities[entity] = number, (lon, lat)
    if not entities:
        raise RawFormatError(path, 2, "no entities")
    return entities


def tile_grid(params: Params, lon: float, lat: float) -> tuple[Affine, np.ndarray, np.ndarray]:
    """The tile's affine and its pixel-centre coordinates: the point lies in pixel (h, h)."""
    (x,), (y,) = transform_points("EPSG:4326", params.crs, [lon], [lat])
    size, half = params.pixel_m, params.tile_px // 2
    left = (math.floor(x / size) - half) * size
    top = (math.floor(y / size) + 1 + half) * size
    centres = (np.arange(params.tile_px) + 0.5) * size
    return Affine(size, 0, left, 0, -size, top), left + centres, top - centres


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


def _number(path: Path, line: int, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise RawFormatError(path, line, f"value {text!r} is not a number")
    return value


def _inside(polygon: np.ndarray, x: float, y: float) -> bool:
    """Ray casting: whether (x, y) lies inside the closed polygon."""
    inside = False
    for (x0, y0), (x1, y1) in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            inside = not inside
    return inside
