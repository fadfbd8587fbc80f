"""GeoTIFF test helpers shared by the imagery reader tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import rasterio
from rasterio.transform import from_origin
from scibench_testing.realdata import REALDATA, requires_realdata

from stages.sources import imagery
from stages.sources.imagery import Params

GEOTIFF = REALDATA / "geotiff_rasterio"
needs_real = requires_realdata("geotiff_rasterio")


def tables(raw_dir: Path, on_error: str = "raise") -> dict:
    return {t.name: t for t in imagery.read(raw_dir, Params(on_error=on_error))}


def write_raster(path: Path, data: np.ndarray, crs: str | None = "EPSG:32618", transform=None,
                 nodata: float | None = None, **extra) -> Path:
    """A single- or multi-band GeoTIFF; default grid 100 m pixels at (500000, 4500000)."""
    data = data if data.ndim == 3 else data[np.newaxis]
    transform = from_origin(500_000, 4_500_000, 100, 100) if transform is None else transform
    path.parent.mkdir(parents=True, exist_ok=True)
    profile = {"driver": "GTiff", "width": data.shape[2], "height": data.shape[1],
               "count": data.shape[0], "dtype": data.dtype, "crs": crs, "transform": transform,
               "nodata": nodata} | extra
    with rasterio.Env(GDAL_PAM_ENABLED="NO"), rasterio.open(path, "w", **profile) as dataset:
        dataset.write(data)
    return path
