"""Open a GeoTIFF safely and describe it: georeference, nodata, band dates and tile names.

Every open (`open_raster`, `open_checked`) checks the TIFF container first (`tiff`), GDAL
runs with ``GDAL_PAM_ENABLED=NO`` so a ``.aux.xml`` side-car never changes what is read, and a
raster without a usable georeference, with bounds its CRS cannot hold, or with a nodata value its
data type cannot hold is refused with a `RawFormatError` naming the file.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rasterio
from rasterio._err import CPLE_BaseError
from rasterio.errors import NotGeoreferencedWarning, RasterioError
from rasterio.io import DatasetReader
from rasterio.warp import transform as transform_points

from stages.sources.imagery.tiff import check_tiff, parse_nodata_text
from stages.tables import RawFormatError

STATIC_VARIABLES = frozenset({"relief", "dem", "elevation", "slope", "aspect", "landcover"})
DATED_NAME = re.compile(r"(?P<entity>.+)_(?P<variable>[A-Za-z][A-Za-z0-9]*)_(?P<date>\d{8})")
STATIC_NAME = re.compile(rf"(?P<entity>.+)_(?P<variable>{'|'.join(sorted(STATIC_VARIABLES))})")
TIFF_SUFFIXES = (".tif", ".tiff")
DATE_TAGS = ("DATE", "ACQUISITION_DATE", "ACQUISITIONDATE")
DATE_TEXT = re.compile(r"(\d{4})[-:]?(\d{2})[-:]?(\d{2})(?:[T ].*)?")
MIN_PROJECTED_RES_M = 1e-3  # finer than 1 mm in a projected CRS: the coordinates are degrees
GRID = 5  # points per axis tested when deciding whether a projected raster lies on the Earth
WKT_HEAD = re.compile(r'(\w+)\["([^"]*)"')
GDAL_ERRORS = (RasterioError, CPLE_BaseError, UnicodeDecodeError)  # rasterio decodes GDAL text as UTF-8


@dataclass(frozen=True)
class TileName:
    """What a file name ``<entity>_<variable>_<YYYYMMDD>.tif`` (or ``<entity>_relief.tif``) says."""

    entity: str | None
    variable: str | None
    date: dt.date | None


@dataclass(frozen=True)
class BandInfo:
    """One band: index (1-based), data type, nodata (None, a number or NaN) and labels."""

    index: int
    dtype: str
    nodata: float | None
    description: str | None
    date: dt.date | None
    unit: str | None
    scale: float
    offset: float


@dataclass(frozen=True)
class RasterInfo:
    """A GeoTIFF's grid, CRS and bands. `transform` is the affine (a, b, c, d, e, f)."""

    path: Path
    crs_wkt: str
    crs_epsg: int | None
    crs_unit: str
    width: int
    height: int
    transform: tuple[float, float, float, float, float, float]
    bounds: tuple[float, float, float, float]
    compression: str | None
    name: TileName
    bands: tuple[BandInfo, ...]

    @property
    def res(self) -> tuple[float, float]:
        """Pixel size (x, y) in CRS units, as rasterio reports it (from the affine, unrotated)."""
        a, b, _, d, e, _ = self.transform
        return math.hypot(a, d), math.hypot(b, e)


@contextmanager
def open_raster(path: Path) -> Iterator[DatasetReader]:
    """Open a checked GeoTIFF with GDAL side-cars (PAM) ignored; errors name the file."""
    check_tiff(path)
    with _open(path) as dataset:
        yield dataset


@contextmanager
def _open(path: Path) -> Iterator[DatasetReader]:
    with rasterio.Env(GDAL_PAM_ENABLED="NO"), warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)  # refused later with a named error
        try:
            dataset = rasterio.open(path, driver="GTiff")
        except GDAL_ERRORS as error:
            raise RawFormatError(path, None, f"GDAL cannot open the TIFF ({error})") from None
        with dataset:
            yield dataset


def read_raster(path: Path) -> RasterInfo:
    """Describe one GeoTIFF without reading its pixels; refuse bad georeference or nodata."""
    with open_checked(Path(path)) as (_, info):
        return info


@contextmanager
def open_checked(path: Path) -> Iterator[tuple[DatasetReader, RasterInfo]]:
    """`open_raster` plus the checks of `read_raster`: yields the dataset and its description."""
    layout_nodata = parse_nodata_text(path, check_tiff(path).nodata_text)
    name = parse_tile_name(path)
    with _open(path) as dataset:
        _check_georeference(path, dataset)
        file_tags = {key.upper(): value for key, value in dataset.tags().items()}
        bands = tuple(_band_info(path, dataset, index, layout_nodata, file_tags, name)
                      for index in dataset.indexes)
        crs = dataset.crs
        unit = "degree" if crs.is_geographic else crs.linear_units_factor[0]
        compression = dataset.compression.value.lower() if dataset.compression else None
        yield dataset, RasterInfo(
            path, crs.to_wkt(), crs.to_epsg(), unit, dataset.width, dataset.height,
            tuple(dataset.transform)[:6], tuple(dataset.bounds), compression, name, bands)


def parse_tile_name(path: Path) -> TileName:
    """Entity, variable and date from ``<entity>_<variable>_<YYYYMMDD>.tif``; Nones otherwise."""
    stem = path.name[: -len(path.suffix)] if path.suffix.lower() in TIFF_SUFFIXES else path.name
    match = DATED_NAME.fullmatch(stem) or STATIC_NAME.fullmatch(stem)
    if match is None:
        return TileName(None, None, None)
    text = match.groupdict().get("date")
    date = _parse_date(text) if text else None
    if text and date is None:
        raise RawFormatError(path, None, f"file name date {text} is not a valid date")
    return TileName(match["entity"], match["variable"].lower(), date)


def is_tiff_name(path: Path) -> bool:
    """Whether a path has a .tif/.tiff suffix (any case)."""
    return path.suffix.lower() in TIFF_SUFFIXES


def _band_info(path: Path, dataset: DatasetReader, index: int, layout_nodata: float | None,
               file_tags: dict[str, str], name: TileName) -> BandInfo:
    dtype = dataset.dtypes[index - 1]
    nodata = dataset.nodatavals[index - 1]
    if layout_nodata is not None and math.isnan(layout_nodata):
        nodata = math.nan
    if nodata is not None and np.issubdtype(np.dtype(dtype), np.integer):
        info = np.iinfo(np.dtype(dtype))
        if math.isnan(nodata):
            raise RawFormatError(path, None, f"nodata is NaN, which a {dtype} band cannot hold")
        if nodata != math.floor(nodata) or not info.min <= nodata <= info.max:
            raise RawFormatError(path, None, f"nodata {nodata:g} cannot occur in a {dtype} band")
    band_tags = {key.upper(): value for key, value in dataset.tags(index).items()}
    date = name.date
    for tags in (file_tags, band_tags):  # a band's own tag wins over the file's, both over the name
        for key in DATE_TAGS:
            if key in tags:
                date = _parse_date(tags[key])
                if date is None:
                    raise RawFormatError(path, index, f"band {index}: tag {key}={tags[key]!r} is "
                                         "not a date")
    return BandInfo(index, dtype, None if nodata is None else float(nodata),
                    dataset.descriptions[index - 1] or None, date, dataset.units[index - 1] or None,
                    float(dataset.scales[index - 1]), float(dataset.offsets[index - 1]))


def _parse_date(text: str) -> dt.date | None:
    match = DATE_TEXT.fullmatch(text.strip())
    if match is None:
        return None
    try:
        return dt.date(*(int(part) for part in match.groups()))
    except ValueError:
        return None


def _check_georeference(path: Path, dataset: DatasetReader) -> None:
    """A CRS, a non-degenerate geotransform, and bounds that the CRS can hold."""
    if dataset.crs is None or not dataset.crs.to_wkt():
        problem = "no coordinate reference system (missing georeference)"
        if dataset.gcps[0]:
            problem = "georeferenced only by ground control points; warp it to a grid first"
        raise RawFormatError(path, None, problem)
    affine = dataset.transform
    if affine.is_identity:
        raise RawFormatError(path, None, "identity geotransform (missing georeference)")
    if affine.determinant == 0:
        raise RawFormatError(path, None, f"degenerate geotransform {tuple(affine)[:6]}")
    crs, bounds = dataset.crs, tuple(round(v, 6) for v in dataset.bounds)
    label = _label(crs)
    pixel = max(abs(affine.a) + abs(affine.b), abs(affine.d) + abs(affine.e))
    if crs.is_geographic:
        left, bottom, right, top = dataset.bounds
        if left < -180 - pixel or right > 360 + pixel or bottom < -90 - pixel or top > 90 + pixel:
            raise RawFormatError(path, None, f"bounds {bounds} are impossible for the geographic CRS "
                                 f"{label} (longitude must lie in [-180, 360], latitude in [-90, 90])")
        return
    if not crs.is_projected:
        raise RawFormatError(path, None, f"CRS {label} is neither geographic nor projected (a local "
                             "or engineering CRS cannot be placed on the Earth)")
    metres = crs.linear_units_factor[1]
    if pixel * metres < MIN_PROJECTED_RES_M:
        raise RawFormatError(path, None, f"pixel size {pixel:g} {crs.linear_units_factor[0]} is "
                             f"implausible for the projected CRS {label}; are the coordinates degrees?")
    steps = np.linspace(0, 1, GRID)
    for row in steps * dataset.height:
        for col in steps * dataset.width:
            if _maps_to_earth(crs, *(affine @ (col, row)), pixel):
                return
    raise RawFormatError(path, None, f"bounds {bounds} are impossible for the CRS {label}: no part "
                         "of the raster maps to a longitude/latitude and back")


def _label(crs: rasterio.crs.CRS) -> str:
    """A short name for messages: the authority code or proj4 string, else the WKT's kind and name."""
    text = crs.to_string()
    match = WKT_HEAD.match(text)
    return text if len(text) <= 80 or match is None else f'{match[1]}["{match[2]}"]'


def _maps_to_earth(crs: rasterio.crs.CRS, x: float, y: float, pixel: float) -> bool:
    """Whether (x, y) converts to a valid lon/lat that converts back to (x, y) within a pixel."""
    try:
        (lon,), (lat,) = transform_points(crs, "EPSG:4326", [x], [y])
        (x2,), (y2,) = transform_points("EPSG:4326", crs, [lon], [lat])
    except GDAL_ERRORS:
        return False
    finite = all(math.isfinite(v) for v in (lon, lat, x2, y2))
    return finite and abs(lat) <= 90 and math.hypot(x2 - x, y2 - y) <= pixel
