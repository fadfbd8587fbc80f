"""Attach the pixels of one GeoTIFF to entities: zonal statistics and point samples.

Geometries arrive in any CRS (lon/lat by default) and are reprojected into the raster's CRS with
`rasterio.warp.transform_geom` (edges densified first, so a lon/lat box stays a box on the ground)
or `rasterio.warp.transform` (points). A pixel belongs to a zone when its centre lies inside
(`rasterio.features.geometry_mask`, or every touched pixel with ``all_touched=True``). Only the
window covering the zone is read, in row chunks. Zones over a mosaic of tiles: `mosaic`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from pathlib import Path

import numpy as np
import pandas as pd
from rasterio.crs import CRS
from rasterio.features import geometry_mask
from rasterio.io import DatasetReader
from rasterio.warp import transform as transform_points
from rasterio.warp import transform_geom
from rasterio.windows import Window

from stages.sources.imagery.raster import GDAL_ERRORS, open_checked
from stages.sources.imagery.stats import Moments, read_valid, row_chunks

Zone = Sequence[tuple[float, float]] | tuple[float, float, float, float]
DENSIFY = 16  # points per polygon edge when the zone's CRS differs from the raster's
ZONE_COLUMNS = ["entity", "pixel_count", "count", "mean", "min", "max", "std"]


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
            x, y = point_to(source, dataset.crs, px, py)
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
    pixels, moments = zone_pixels(dataset, band, ring, source, all_touched)
    return {"pixel_count": pixels, "count": moments.count} | moments.summary()


def zone_pixels(dataset: DatasetReader, band: int, ring: list[tuple[float, float]], source: CRS,
                all_touched: bool = False) -> tuple[int, Moments]:
    """Pixels of the raster inside a ring (valid or not) and the moments of the valid ones.

    Moments of zones split over several tiles merge exactly (`Moments.merge`).
    """
    geometry = {"type": "Polygon", "coordinates": [ring]}
    if source != dataset.crs:
        try:
            geometry = transform_geom(source, dataset.crs, {"type": "Polygon", "coordinates": [densify(ring)]})
        except GDAL_ERRORS:
            return 0, Moments()  # the zone lies outside the domain of the raster's projection
    coords = np.asarray(geometry["coordinates"][0], dtype=np.float64)
    if not np.isfinite(coords).all():
        return 0, Moments()
    cols, rows = ~dataset.transform @ (coords[:, 0], coords[:, 1])
    top, bottom = max(math.floor(rows.min()), 0), min(math.ceil(rows.max()), dataset.height)
    left, right = max(math.floor(cols.min()), 0), min(math.ceil(cols.max()), dataset.width)
    if top >= bottom or left >= right:
        return 0, Moments()
    moments, pixels = Moments(), 0
    for chunk in row_chunks(Window(left, top, right - left, bottom - top), dataset):
        inside = geometry_mask([geometry], out_shape=(int(chunk.height), int(chunk.width)),
                               transform=dataset.window_transform(chunk), all_touched=all_touched,
                               invert=True)
        data, valid = read_valid(dataset.name, dataset, band, chunk)
        moments = moments.merge(Moments.of(data[inside & valid]))
        pixels += int(inside.sum())
    return pixels, moments


def densify(ring: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The closed ring with `DENSIFY` points per edge, so it keeps its shape when reprojected."""
    points = []
    for (x0, y0), (x1, y1) in zip(ring[:-1], ring[1:], strict=True):
        steps = np.arange(DENSIFY) / DENSIFY
        points.extend(zip((x0 + (x1 - x0) * steps).tolist(), (y0 + (y1 - y0) * steps).tolist(),
                          strict=True))
    return [*points, points[0]]


def point_to(source: CRS, target: CRS, x: float, y: float) -> tuple[float, float]:
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
