"""Attach GeoTIFF pixels to entities: zonal statistics, point samples, buffers around points.

Geometries arrive in any CRS (lon/lat by default) and are reprojected into the raster's CRS with
`rasterio.warp.transform_geom` (edges densified first, so a lon/lat box stays a box on the ground)
or `rasterio.warp.transform` (points). A pixel belongs to a zone when its centre lies inside
(`rasterio.features.geometry_mask`, or every touched pixel with ``all_touched=True``). Only the
window covering the zone is read, in row chunks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from affine import Affine
from rasterio.crs import CRS
from rasterio.features import geometry_mask
from rasterio.io import DatasetReader
from rasterio.warp import transform as transform_points
from rasterio.warp import transform_geom
from rasterio.windows import Window

from stages.sources.imagery_raster import (
    GDAL_ERRORS,
    RasterInfo,
    is_tiff_name,
    open_checked,
    parse_tile_name,
    read_raster,
)
from stages.sources.imagery_stats import Moments, read_valid, row_chunks

Zone = Sequence[tuple[float, float]] | tuple[float, float, float, float]
DENSIFY = 16  # points per polygon edge when the zone's CRS differs from the raster's
ZONE_COLUMNS = ["entity", "pixel_count", "count", "mean", "min", "max", "std"]
ENTITY_COLUMNS = ["entity", "variable", "date", "file", "band", "mean", "min", "max", "std",
                  "valid_fraction", "valid_count"]
WGS84 = CRS.from_epsg(4326)
M_PER_DEG_LAT, M_PER_DEG_LON_EQUATOR = 110_574.0, 111_320.0  # spherical approximation, geographic CRSs


def zonal_stats(path: Path, band: int, polygons: dict[str, Zone], crs: str = "EPSG:4326",
                all_touched: bool = False) -> pd.DataFrame:
    """Valid-pixel statistics of one band inside each zone, one row per entity (sorted).

    A zone is a ring of (x, y) vertices or a box (xmin, ymin, xmax, ymax), in `crs`. Columns:
    `entity`, `pixel_count` (pixels in the zone, valid or not), `count` (valid ones), `mean`,
    `min`, `max`, `std` (population; null when `count` is 0).
    """
    source = CRS.from_user_input(crs)
    with open_checked(Path(path)) as (dataset, _):
        rows = [{"entity": entity} | zone_moments(dataset, band, ring_of(zone), source, all_touched)
                for entity, zone in sorted(polygons.items())]
    return _frame(rows, ZONE_COLUMNS)


def sample_points(path: Path, band: int, points: dict[str, tuple[float, float]],
                  crs: str = "EPSG:4326") -> pd.DataFrame:
    """The pixel value under each point: `entity`, `x`, `y` (raster CRS), `row`, `col`, `inside`, `value`.

    `value` is null where the pixel is nodata/masked or the point falls outside the raster
    (`inside` False, `row`/`col` null there).
    """
    rows = []
    with open_checked(Path(path)) as (dataset, _):
        source, inverse = CRS.from_user_input(crs), ~dataset.transform
        for entity, (px, py) in sorted(points.items()):
            x, y = _point_to(source, dataset.crs, px, py)
            col, row = (math.floor(v) for v in inverse @ (x, y)) if math.isfinite(x) else (-1, -1)
            inside = 0 <= row < dataset.height and 0 <= col < dataset.width
            value = None
            if inside:
                data, valid = read_valid(dataset.name, dataset, band, Window(col, row, 1, 1))
                value = float(data[0, 0]) if valid[0, 0] else None
            rows.append({"entity": entity, "x": x, "y": y, "row": row if inside else None,
                         "col": col if inside else None, "inside": inside, "value": value})
    frame = _frame(rows, ["entity", "x", "y", "row", "col", "inside", "value"])
    return frame.astype({"row": "Int64", "col": "Int64", "inside": "bool"})


def entity_image_stats(raw_dir: Path, entities: dict[str, tuple[float, float]],
                       buffer_m: float) -> pd.DataFrame:
    """Statistics of every band in a square of half-side `buffer_m` around each entity's point.

    `entities` maps ids to (lon, lat). An entity uses the tiles named for it
    (``<entity>_<variable>_<YYYYMMDD>.tif``, ``<entity>_relief.tif``); without such tiles, every
    GeoTIFF under `raw_dir` whose grid contains the point. The square is built in the raster's
    CRS (in a geographic CRS from the local metres per degree). Columns `entity`, `variable`
    (from the name, else the band description, else ``<stem>_b<band>``), `date`, `file` (relative
    to `raw_dir`), `band`, `mean`, `min`, `max`, `std`, `valid_fraction` (valid pixels over pixels
    in the square; null if none), `valid_count`; sorted by entity, variable, date, file, band.
    """
    if not buffer_m > 0:
        raise ValueError(f"buffer_m must be positive, got {buffer_m}")
    files = sorted(p for p in Path(raw_dir).rglob("*") if p.is_file() and is_tiff_name(p))
    named: dict[str, list[Path]] = {}
    for path in files:
        named.setdefault(parse_tile_name(path).entity, []).append(path)
    infos: dict[Path, RasterInfo] = {}
    rows = []
    for entity, (lon, lat) in sorted(entities.items()):
        tiles = named.get(entity) or [p for p in files if _covers(infos, p, lon, lat)]
        for path in tiles:
            with open_checked(path) as (dataset, info):
                x, y = _point_to(WGS84, dataset.crs, lon, lat)
                if not math.isfinite(x):
                    continue
                hx, hy = _half_sides(dataset.crs, lat, buffer_m)
                ring = ring_of((x - hx, y - hy, x + hx, y + hy))
                for band in info.bands:
                    zone = zone_moments(dataset, band.index, ring, dataset.crs)
                    variable = info.name.variable or band.description or f"{path.stem}_b{band.index}"
                    fraction = zone["count"] / zone["pixel_count"] if zone["pixel_count"] else None
                    rows.append({"entity": entity, "variable": variable, "date": band.date,
                                 "file": path.relative_to(raw_dir).as_posix(), "band": band.index,
                                 "mean": zone["mean"], "min": zone["min"], "max": zone["max"],
                                 "std": zone["std"], "valid_fraction": fraction,
                                 "valid_count": zone["count"]})
    frame = _frame(rows, ENTITY_COLUMNS)
    frame["date"] = pd.array(frame["date"].tolist(), dtype=pd.ArrowDtype(pa.date32()))
    frame = frame.astype({"variable": "string", "file": "string", "band": "int64",
                          "valid_fraction": "float64", "valid_count": "int64"})
    return frame.sort_values(["entity", "variable", "date", "file", "band"], ignore_index=True)


def ring_of(zone: Zone) -> list[tuple[float, float]]:
    """A closed ring from a vertex list or a (xmin, ymin, xmax, ymax) box."""
    if len(zone) == 4 and all(isinstance(v, Real) for v in zone):
        xmin, ymin, xmax, ymax = (float(v) for v in zone)
        if not (xmin < xmax and ymin < ymax):
            raise ValueError(f"box {tuple(zone)} must be (xmin, ymin, xmax, ymax) with min < max")
        zone = [(xmin, ymin), (xmax, ymin), (xmax, ymax), (xmin, ymax)]
    ring = [(float(x), float(y)) for x, y in zone]
    if len(set(ring)) < 3 or not all(math.isfinite(v) for p in ring for v in p):
        raise ValueError(f"a zone needs at least 3 distinct finite vertices, got {ring}")
    return ring if ring[0] == ring[-1] else [*ring, ring[0]]


def zone_moments(dataset: DatasetReader, band: int, ring: list[tuple[float, float]], source: CRS,
                 all_touched: bool = False) -> dict[str, int | float | None]:
    """pixel_count, count, mean, min, max, std of the valid pixels of `band` inside a ring."""
    empty = {"pixel_count": 0, "count": 0} | Moments().summary()
    if source != dataset.crs:
        ring = _densify(ring)
    try:
        geometry = transform_geom(source, dataset.crs, {"type": "Polygon", "coordinates": [ring]})
    except GDAL_ERRORS:
        return empty  # the zone lies outside the domain of the raster's projection
    coords = np.asarray(geometry["coordinates"][0], dtype=np.float64)
    if not np.isfinite(coords).all():
        return empty
    cols, rows = ~dataset.transform @ (coords[:, 0], coords[:, 1])
    top, bottom = max(math.floor(rows.min()), 0), min(math.ceil(rows.max()), dataset.height)
    left, right = max(math.floor(cols.min()), 0), min(math.ceil(cols.max()), dataset.width)
    if top >= bottom or left >= right:
        return empty
    moments, pixels = Moments(), 0
    for chunk in row_chunks(Window(left, top, right - left, bottom - top), dataset):
        inside = geometry_mask([geometry], out_shape=(int(chunk.height), int(chunk.width)),
                               transform=dataset.window_transform(chunk), all_touched=all_touched,
                               invert=True)
        data, valid = read_valid(dataset.name, dataset, band, chunk)
        moments = moments.merge(Moments.of(data[inside & valid]))
        pixels += int(inside.sum())
    return {"pixel_count": pixels, "count": moments.count} | moments.summary()


def _covers(infos: dict[Path, RasterInfo], path: Path, lon: float, lat: float) -> bool:
    """Whether the raster's grid contains the lon/lat point (descriptions cached in `infos`)."""
    if path not in infos:
        infos[path] = read_raster(path)
    info = infos[path]
    x, y = _point_to(WGS84, CRS.from_wkt(info.crs_wkt), lon, lat)
    if not math.isfinite(x):
        return False
    col, row = ~Affine(*info.transform) @ (x, y)
    return 0 <= row < info.height and 0 <= col < info.width


def _half_sides(crs: CRS, lat: float, buffer_m: float) -> tuple[float, float]:
    """Half-sides (x, y) of a square of half-side `buffer_m`, in units of the CRS."""
    if crs.is_geographic:
        return buffer_m / (M_PER_DEG_LON_EQUATOR * math.cos(math.radians(lat))), buffer_m / M_PER_DEG_LAT
    metres = crs.linear_units_factor[1]
    return buffer_m / metres, buffer_m / metres


def _densify(ring: list[tuple[float, float]]) -> list[tuple[float, float]]:
    points = []
    for (x0, y0), (x1, y1) in zip(ring[:-1], ring[1:], strict=True):
        steps = np.arange(DENSIFY) / DENSIFY
        points.extend(zip((x0 + (x1 - x0) * steps).tolist(), (y0 + (y1 - y0) * steps).tolist(),
                          strict=True))
    return [*points, points[0]]


def _point_to(source: CRS, target: CRS, x: float, y: float) -> tuple[float, float]:
    """One point in the target CRS; NaN when it is outside the projection's domain."""
    if source == target:
        return float(x), float(y)
    try:
        (tx,), (ty,) = transform_points(source, target, [x], [y])
    except GDAL_ERRORS:
        return math.nan, math.nan
    return (tx, ty) if math.isfinite(tx) and math.isfinite(ty) else (math.nan, math.nan)


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=columns)
    floats = [c for c in columns if c in ("x", "y", "value", "mean", "min", "max", "std")]
    frame = frame.astype(dict.fromkeys(floats, "float64") | {"entity": "string"})
    return frame.astype({c: "int64" for c in ("pixel_count", "count") if c in columns})
