"""Zonal statistics over a mosaic of tiles: footprints across tile edges, outside, over nodata."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rasterio
from rasterio.transform import from_origin
from rasterio.warp import transform as transform_points
from scibench_testing.imagery import write_raster

from stages.sources import imagery
from stages.sources.imagery.mosaic import LonLatBox, Square, Tile, group_layers

CRS = "EPSG:5070"
X0, Y0, PIXEL = 1_000_000.0, 2_000_000.0, 1000.0  # top-left corner of the 8 x 8 km mosaic


def lonlat(x: float, y: float) -> tuple[float, float]:
    (lon,), (lat,) = transform_points(CRS, "EPSG:4326", [x], [y])
    return lon, lat


def write_mosaic(root: Path, data: np.ndarray, name: str = "ndvi_20200715", tile: int = 4,
                 unit: str | None = None) -> None:
    """Cut `data` (rows x cols pixels of 1 km) into `tile` x `tile` tiles named r<i>c<j>_<name>.tif."""
    for row in range(0, data.shape[0], tile):
        for col in range(0, data.shape[1], tile):
            path = root / f"r{row // tile:02d}c{col // tile:02d}_{name}.tif"
            transform = from_origin(X0 + col * PIXEL, Y0 - row * PIXEL, PIXEL, PIXEL)
            write_raster(path, data[row:row + tile, col:col + tile], crs=CRS, transform=transform, nodata=-9999)
            if unit is not None:
                with rasterio.Env(GDAL_PAM_ENABLED="NO"), rasterio.open(path, "r+") as dataset:
                    dataset.set_band_unit(1, unit)


def gradient() -> np.ndarray:
    """Pixel (r, c) of the 8 x 8 mosaic holds 10 r + c."""
    return (10 * np.arange(8)[:, None] + np.arange(8)[None, :]).astype(np.float32)


def test_a_square_across_four_tiles_gets_the_statistics_of_one_seamless_raster(tmp_path):
    data = gradient()
    write_mosaic(tmp_path / "tiles", data)
    write_raster(tmp_path / "whole" / "all_ndvi_20200715.tif", data, crs=CRS,
                 transform=from_origin(X0, Y0, PIXEL, PIXEL), nodata=-9999)
    centre = lonlat(X0 + 4 * PIXEL, Y0 - 4 * PIXEL)  # the corner shared by the four tiles
    footprints = {"basin": Square(*centre, side_m=4000.0)}  # rows 2-5, cols 2-5: 16 pixels
    tiled = imagery.entity_image_stats(tmp_path / "tiles", footprints)
    whole = imagery.entity_image_stats(tmp_path / "whole", footprints)
    block = data[2:6, 2:6].astype(np.float64)
    row = tiled.iloc[0]
    assert (row["entity"], row["variable"], row["date"]) == ("basin", "ndvi", dt.date(2020, 7, 15))
    assert row[["pixel_count", "valid_count", "valid_fraction"]].tolist() == [16, 16, 1.0]
    assert row["mean"] == pytest.approx(block.mean(), rel=1e-12) == 38.5
    assert (row["min"], row["max"]) == (22.0, 55.0)
    assert row["std"] == pytest.approx(block.std(), rel=1e-12)
    pd.testing.assert_frame_equal(tiled, whole, check_exact=False, rtol=1e-12)


def test_a_lonlat_box_spanning_tiles_equals_the_box_on_one_raster(tmp_path):
    data = np.random.default_rng(5).normal(0.5, 0.1, (8, 8)).astype(np.float32)
    write_mosaic(tmp_path / "tiles", data)
    write_raster(tmp_path / "whole" / "all_ndvi_20200715.tif", data, crs=CRS,
                 transform=from_origin(X0, Y0, PIXEL, PIXEL), nodata=-9999)
    (west, north), (east, south) = lonlat(X0 + 1500, Y0 - 1500), lonlat(X0 + 6500, Y0 - 6500)
    footprints = {"cell": LonLatBox(west, south, east, north)}
    tiled = imagery.entity_image_stats(tmp_path / "tiles", footprints)
    whole = imagery.entity_image_stats(tmp_path / "whole", footprints)
    assert tiled.iloc[0]["pixel_count"] > 16
    pd.testing.assert_frame_equal(tiled, whole, check_exact=False, rtol=1e-12)


def test_outside_the_mosaic_is_null_with_null_fraction_and_nodata_only_is_fraction_zero(tmp_path):
    data = gradient()
    data[:4, 4:] = -9999  # tile r00c01 is all nodata (sea, cloud)
    write_mosaic(tmp_path, data)
    footprints = {"cloud": Square(*lonlat(X0 + 6000, Y0 - 2000), side_m=2000.0),
                  "far": Square(-90.0, 40.0, side_m=2000.0), "unknown": None,
                  "point": Square(*lonlat(X0 + 2300, Y0 - 5700), side_m=0.0)}
    stats = imagery.entity_image_stats(tmp_path, footprints).set_index("entity")
    assert stats.index.tolist() == ["cloud", "far", "point", "unknown"]
    assert stats.loc["cloud", ["pixel_count", "valid_count", "valid_fraction"]].tolist() == [4, 0, 0.0]
    for entity in ("far", "unknown"):
        assert stats.loc[entity, ["pixel_count", "valid_count"]].tolist() == [0, 0]
        assert stats.loc[entity, ["valid_fraction", "mean", "min", "max", "std"]].isna().all()
    assert stats.loc["cloud", ["mean", "std"]].isna().all()
    point = stats.loc["point"]  # a zero-size footprint reads the pixel the point falls in: (5, 2)
    assert point[["pixel_count", "valid_count", "mean"]].tolist() == [1, 1, 52.0]


def test_layers_group_tiles_by_variable_and_date_and_refuse_overlaps_and_mixed_units(tmp_path):
    write_mosaic(tmp_path / "ok", gradient(), "ndvi_20200715")
    write_mosaic(tmp_path / "ok", gradient(), "ndvi_20200115")
    write_mosaic(tmp_path / "ok", gradient(), "relief", unit="m")
    stats = imagery.entity_image_stats(tmp_path / "ok", {"a": Square(*lonlat(X0 + 500, Y0 - 500), 0.0)})
    assert stats["variable"].tolist() == ["ndvi", "ndvi", "relief"] and stats["mean"].tolist() == [0.0] * 3
    assert stats["date"].tolist()[:2] == [dt.date(2020, 1, 15), dt.date(2020, 7, 15)]
    assert pd.isna(stats["date"].iloc[2])
    assert stats["unit"].isna().tolist() == [True, True, False] and stats["unit"].iloc[2] == "m"
    tile = Tile(Path("a.tif"), 1, "WKT", (0.0, 0.0, 4000.0, 4000.0), 1000.0)
    shifted = Tile(Path("b.tif"), 1, "WKT", (3000.0, 0.0, 7000.0, 4000.0), 1000.0)
    touching = Tile(Path("c.tif"), 1, "WKT", (4000.0, 0.0, 8000.0, 4000.0), 1000.0)
    assert len(group_layers([("ndvi", None, "1", tile), ("ndvi", None, "1", touching)])[0].tiles) == 2
    with pytest.raises(ValueError, match="tiles a.tif and b.tif overlap"):
        group_layers([("ndvi", None, "1", tile), ("ndvi", None, "1", shifted)])
    with pytest.raises(ValueError, match=r"disagree on the unit \(\['1', 'm'\]\)"):
        group_layers([("ndvi", None, "1", tile), ("ndvi", None, "m", touching)])
