"""Zonal statistics over a mosaic: layers spread over many tiles, footprints that span tile edges.

A layer is one variable (and date) of a mosaic, held by one band of each of its tiles. A footprint
is a `Square` of given side centred on a lon/lat point, built in each raster's own CRS (an
equal-area CRS such as CONUS Albers keeps its area; it is never narrower than one pixel, so a
point entity reads the pixel it falls in), or a `LonLatBox` (a grid cell), densified and
reprojected. Each tile is opened once; the pixels whose centres fall in a footprint are counted
per tile (`zones.zone_pixels`) and their moments merged exactly, so a footprint over a
tile edge gets the statistics of one seamless raster. Tiles of a layer must not overlap.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from rasterio.crs import CRS
from rasterio.io import DatasetReader
from rasterio.warp import transform_geom

from stages.sources.imagery.raster import GDAL_ERRORS, is_tiff_name, open_checked, read_raster
from stages.sources.imagery.stats import Moments
from stages.sources.imagery.zones import densify, point_to, ring_of, zone_pixels

WGS84 = CRS.from_epsg(4326)
M_PER_DEG_LAT, M_PER_DEG_LON_EQUATOR = 110_574.0, 111_320.0  # spherical approximation, geographic CRSs
STATS_COLUMNS = ["entity", "variable", "date", "unit", "pixel_count", "valid_count", "valid_fraction",
                 "mean", "min", "max", "std"]


@dataclass(frozen=True)
class Square:
    """A square of side `side_m` metres centred on (lon, lat), axis-aligned in the raster's CRS."""

    lon: float
    lat: float
    side_m: float


@dataclass(frozen=True)
class LonLatBox:
    """A box of longitudes [west, east] and latitudes [south, north] (degrees)."""

    west: float
    south: float
    east: float
    north: float


Footprint = Square | LonLatBox


@dataclass(frozen=True)
class Tile:
    """One band of one GeoTIFF: its grid (CRS WKT, bounds, pixel size) for overlap checks."""

    path: Path
    band: int
    crs_wkt: str
    bounds: tuple[float, float, float, float]
    pixel: float


@dataclass(frozen=True)
class Layer:
    """One variable (and date; None for a static layer) of a mosaic, in `unit`, over its tiles."""

    variable: str
    date: dt.date | None
    unit: str | None
    tiles: tuple[Tile, ...]


def group_layers(bands: Iterable[tuple[str, dt.date | None, str | None, Tile]]) -> list[Layer]:
    """Group (variable, date, unit, tile) band records into layers, sorted by variable then date.

    Raises ValueError naming the files when a layer mixes units or two of its tiles overlap.
    """
    grouped: dict[tuple[str, dt.date | None], list[tuple[str | None, Tile]]] = {}
    for variable, date, unit, tile in bands:
        grouped.setdefault((variable, date), []).append((unit, tile))
    layers = []
    for (variable, date), members in sorted(grouped.items(), key=lambda item: (item[0][0], item[0][1] or dt.date.min)):
        units = sorted({str(unit) for unit, _ in members})
        tiles = tuple(sorted((tile for _, tile in members), key=lambda t: (t.path.as_posix(), t.band)))
        if len(units) > 1:
            raise ValueError(f"layer {variable} {date or '(static)'}: tiles disagree on the unit ({units}), "
                             f"e.g. {tiles[0].path} and {tiles[-1].path}")
        _check_no_overlap(variable, date, tiles)
        layers.append(Layer(variable, date, members[0][0], tiles))
    return layers


def mosaic_zone_stats(layers: list[Layer], footprints: dict[str, Footprint | None]) -> pd.DataFrame:
    """Statistics of every layer inside every footprint, merged over all the tiles it spans.

    One row per entity and layer (sorted by entity, variable, date): `unit`, `pixel_count`
    (mosaic pixels in the footprint, valid or not), `valid_count`, `valid_fraction` (valid over
    pixel_count: null when the footprint covers no pixel of the layer, i.e. lies outside the mosaic
    or has no footprint; 0 when it covers only nodata such as sea or clouds), `mean`, `min`, `max`,
    `std` (population; null when no pixel is valid).
    """
    sums: dict[tuple[str, int], tuple[int, Moments]] = {}
    by_file: dict[Path, list[tuple[int, int]]] = {}
    for number, layer in enumerate(layers):
        for tile in layer.tiles:
            by_file.setdefault(tile.path, []).append((number, tile.band))
    zones: dict[tuple[str, tuple[float, float]], tuple[list[str], list, np.ndarray]] = {}
    for path in sorted(by_file):
        with open_checked(path) as (dataset, _):
            key = (dataset.crs.to_wkt(), dataset.res)
            if key not in zones:
                zones[key] = _zones_in(dataset, footprints)
            entities, rings, boxes = zones[key]
            left, bottom, right, top = dataset.bounds
            hits = np.flatnonzero((boxes[:, 0] < right) & (boxes[:, 2] > left) & (boxes[:, 1] < top)
                                  & (boxes[:, 3] > bottom)) if len(entities) else []
            for index in hits:
                for number, band in by_file[path]:
                    pixels, moments = zone_pixels(dataset, band, rings[index], dataset.crs)
                    before, merged = sums.get((entities[index], number), (0, Moments()))
                    sums[(entities[index], number)] = (before + pixels, merged.merge(moments))
    rows = []
    for entity in sorted(footprints):
        for number, layer in enumerate(layers):
            pixels, moments = sums.get((entity, number), (0, Moments()))
            rows.append({"entity": entity, "variable": layer.variable, "date": layer.date, "unit": layer.unit,
                         "pixel_count": pixels, "valid_count": moments.count,
                         "valid_fraction": moments.count / pixels if pixels else None} | moments.summary())
    frame = pd.DataFrame(rows, columns=STATS_COLUMNS)
    frame["date"] = pd.array(frame["date"].tolist(), dtype=pd.ArrowDtype(pa.date32()))
    kinds = {"entity": "string", "variable": "string", "unit": "string", "pixel_count": "int64",
             "valid_count": "int64"}
    return frame.astype(kinds | dict.fromkeys(("valid_fraction", "mean", "min", "max", "std"), "float64"))


def entity_image_stats(raw_dir: Path, footprints: dict[str, Footprint | None]) -> pd.DataFrame:
    """`mosaic_zone_stats` over every labelled band of every GeoTIFF under `raw_dir`.

    A band is labelled by its file name (``<tile>_<variable>_<YYYYMMDD>.tif``) or description.
    """
    bands = []
    for path in sorted(p for p in Path(raw_dir).rglob("*") if p.is_file() and is_tiff_name(p)):
        info = read_raster(path)
        for band in info.bands:
            variable = info.name.variable or band.description
            if variable is not None:
                tile = Tile(path, band.index, info.crs_wkt, info.bounds, max(info.res))
                bands.append((variable, band.date, band.unit, tile))
    return mosaic_zone_stats(group_layers(bands), footprints)


def _zones_in(dataset: DatasetReader, footprints: dict[str, Footprint | None]) -> tuple[list[str], list, np.ndarray]:
    """Each footprint as a ring in the dataset's CRS and its bounding box (x0, y0, x1, y1)."""
    entities, rings, boxes = [], [], []
    for entity, footprint in sorted(footprints.items()):
        ring = None if footprint is None else _ring_in(dataset.crs, max(dataset.res), footprint)
        if ring is not None:
            coords = np.asarray(ring)
            entities.append(entity)
            rings.append(ring)
            boxes.append((*coords.min(axis=0), *coords.max(axis=0)))
    return entities, rings, np.asarray(boxes, dtype=np.float64).reshape(-1, 4)


def _ring_in(crs: CRS, pixel: float, footprint: Footprint) -> list[tuple[float, float]] | None:
    """The footprint's ring in `crs`, or None where it falls outside the projection's domain."""
    if isinstance(footprint, Square):
        x, y = point_to(WGS84, crs, footprint.lon, footprint.lat)
        if not math.isfinite(x):
            return None
        if crs.is_geographic:
            hx = footprint.side_m / 2 / (M_PER_DEG_LON_EQUATOR * math.cos(math.radians(footprint.lat)))
            hy = footprint.side_m / 2 / M_PER_DEG_LAT
        else:
            hx = hy = footprint.side_m / 2 / crs.linear_units_factor[1]
        hx, hy = max(hx, pixel / 2), max(hy, pixel / 2)
        return ring_of((x - hx, y - hy, x + hx, y + hy))
    ring = ring_of((footprint.west, footprint.south, footprint.east, footprint.north))
    if crs == WGS84:
        return ring
    try:
        geometry = transform_geom(WGS84, crs, {"type": "Polygon", "coordinates": [densify(ring)]})
    except GDAL_ERRORS:
        return None
    coords = [tuple(point) for point in geometry["coordinates"][0]]
    return coords if np.isfinite(np.asarray(coords)).all() else None


def _check_no_overlap(variable: str, date: dt.date | None, tiles: tuple[Tile, ...]) -> None:
    """Tiles of one layer in the same CRS may touch but not overlap by half a pixel or more."""
    by_crs: dict[str, list[Tile]] = {}
    for tile in tiles:
        by_crs.setdefault(tile.crs_wkt, []).append(tile)
    for group in by_crs.values():
        bounds = np.asarray([t.bounds for t in group])
        slack = np.asarray([t.pixel for t in group]) / 2
        for i in range(len(group) - 1):
            width = np.minimum(bounds[i, 2], bounds[i + 1:, 2]) - np.maximum(bounds[i, 0], bounds[i + 1:, 0])
            height = np.minimum(bounds[i, 3], bounds[i + 1:, 3]) - np.maximum(bounds[i, 1], bounds[i + 1:, 1])
            clash = np.flatnonzero((width >= slack[i]) & (height >= slack[i]))
            if clash.size:
                other = group[i + 1 + clash[0]]
                raise ValueError(f"layer {variable} {date or '(static)'}: tiles {group[i].path} and {other.path} "
                                 "overlap; a mosaic's tiles must not overlap")
