"""GeoTIFF test helpers shared by the imagery reader tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

from stages.sources import imagery
from stages.sources.imagery import Params

REALDATA = Path(__file__).resolve().parents[2].parent / "shared" / "realdata"
GEOTIFF = REALDATA / "geotiff_rasterio"
needs_real = pytest.mark.skipif(
    not GEOTIFF.is_dir(), reason=f"real GeoTIFF samples not found at {GEOTIFF} (shared/realdata)"
)


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
