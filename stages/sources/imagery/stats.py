"""Pixel statistics of GeoTIFF bands: whole bands, zones (polygons or boxes) and points.

Pixels are read in row chunks of at most `CHUNK_PIXELS`, never a whole large raster at once. A
pixel is valid when GDAL's mask for the band says so (nodata, internal mask or alpha band, as
``dataset.read(masked=True)``) and it is not NaN. A valid pixel holding a typical fill value the
file does not declare (float: |v| >= 1e30, +-inf, -9999, -99999; signed integers of 16 bits or
more: the type's minimum or -9999) is an unexpected sentinel and raises a `RawFormatError` whose
record is the band. Statistics are float64; `std` is the population standard deviation (ddof=0).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rasterio.io import DatasetReader
from rasterio.windows import Window

from stages.sources.imagery.raster import GDAL_ERRORS
from stages.tables import RawFormatError

CHUNK_PIXELS = 1 << 22
FLOAT_SENTINELS = (-9999.0, -99999.0)
HUGE = 1e30


@dataclass(frozen=True)
class Moments:
    """Count, mean, sum of squared deviations, min and max of some values (Chan et al. merge)."""

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    low: float = np.inf
    high: float = -np.inf

    @classmethod
    def of(cls, values: np.ndarray) -> Moments:
        """Moments of a 1-D array (float64 arithmetic)."""
        if values.size == 0:
            return cls()
        values = values.astype(np.float64)
        mean = float(values.mean())
        return cls(values.size, mean, float(((values - mean) ** 2).sum()), float(values.min()),
                   float(values.max()))

    def merge(self, other: Moments) -> Moments:
        """Moments of the union of both value sets."""
        if other.count == 0 or self.count == 0:
            return self if other.count == 0 else other
        count = self.count + other.count
        delta = other.mean - self.mean
        return Moments(count, self.mean + delta * other.count / count,
                       self.m2 + other.m2 + delta * delta * self.count * other.count / count,
                       min(self.low, other.low), max(self.high, other.high))

    def summary(self) -> dict[str, float | None]:
        """mean, min, max, std; None for each when no value was seen."""
        if self.count == 0:
            return dict.fromkeys(("mean", "min", "max", "std"))
        return {"mean": self.mean, "min": self.low, "max": self.high,
                "std": float(np.sqrt(self.m2 / self.count))}


@dataclass(frozen=True)
class BandStats:
    """Whole-band statistics over valid pixels."""

    band: int
    valid_px: int
    masked_px: int
    moments: Moments


def band_statistics(path: Path | str, dataset: DatasetReader, band: int) -> BandStats:
    """Statistics of one band from chunked windowed reads."""
    moments, total = Moments(), 0
    for window in row_chunks(Window(0, 0, dataset.width, dataset.height), dataset):
        data, valid = read_valid(path, dataset, band, window)
        moments = moments.merge(Moments.of(data[valid]))
        total += valid.size
    return BandStats(band, moments.count, total - moments.count, moments)


def row_chunks(window: Window, dataset: DatasetReader) -> Iterator[Window]:
    """Split a window into full-width row chunks aligned to the file's block height."""
    block_rows = dataset.block_shapes[0][0] if dataset.block_shapes else 1
    rows = max(block_rows, CHUNK_PIXELS // max(int(window.width), 1) // block_rows * block_rows)
    top, bottom = int(window.row_off), int(window.row_off + window.height)
    for start in range(top, bottom, rows):
        yield Window(window.col_off, start, window.width, min(rows, bottom - start))


def read_valid(path: Path | str, dataset: DatasetReader, band: int,
               window: Window) -> tuple[np.ndarray, np.ndarray]:
    """Pixel values of a window and where they are valid; raise on undeclared fill values."""
    try:
        data = dataset.read(band, window=window)
        valid = dataset.read_masks(band, window=window) > 0
    except GDAL_ERRORS as error:
        raise RawFormatError(path, band, f"band {band}: pixel data cannot be read, the file is "
                             f"truncated or corrupt ({error})") from None
    if data.dtype.kind == "f":
        valid &= ~np.isnan(data)
        suspicious = valid & ((np.abs(data) >= HUGE) | np.isin(data, FLOAT_SENTINELS))
    elif data.dtype.kind == "i" and data.dtype.itemsize >= 2:
        suspicious = valid & ((data == np.iinfo(data.dtype).min) | (data == -9999))
    else:
        suspicious = None
    if suspicious is not None and suspicious.any():
        row, col = np.argwhere(suspicious)[0]
        value = data[row, col]
        declared = dataset.nodatavals[band - 1]
        raise RawFormatError(path, band, f"band {band}: unexpected sentinel {value:g} at row "
                             f"{row + int(window.row_off)}, column {col + int(window.col_off)} "
                             f"(declared nodata: {declared})")
    return data, valid
