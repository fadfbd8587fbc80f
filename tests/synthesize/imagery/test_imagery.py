"""Synthetic imagery mosaic: native GeoTIFF tiles, determinism, a seamless grid, relief and NDVI structure."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rasterio
from pydantic import ValidationError
from rasterio.warp import transform as transform_points
from scibench_testing.files import folder_bytes
from scipy.stats import spearmanr

from stages.sources import imagery as reader
from stages.sources.imagery.mosaic import Square
from stages.sources.imagery.tiff import DATETIME_TAG, check_tiff
from stages.synthesize import imagery
from stages.synthesize.imagery import CONUS_ALBERS_M, MosaicGrid, Params

TINY = Params(pixel_m=16000, tile_px=64)
COARSE = Params(pixel_m=8000, tile_px=128)  # the default profile's grid at half its resolution
DATES = ["20200115", "20200415", "20200715", "20201015"]
POINTS = {f"p{i:02d}": (lon, lat) for i, (lon, lat) in enumerate(  # a lon/lat lattice over CONUS
    (lon, lat) for lon in range(-120, -70, 5) for lat in (32, 37, 42, 46))}


def mosaic(root: Path, grid: MosaicGrid, layer: str) -> np.ndarray:
    """The tiles of one layer stitched into one array (nodata as NaN)."""
    rows = []
    for row in range(grid.n_rows):
        tiles = []
        for col in range(grid.n_cols):
            with rasterio.open(root / f"{grid.tile_id(row, col)}_{layer}.tif") as dataset:
                tiles.append(dataset.read(1, masked=True).filled(np.nan))
        rows.append(np.hstack(tiles))
    return np.vstack(rows)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    imagery.write(root, TINY)
    return root


@pytest.fixture(scope="module")
def coarse(tmp_path_factory) -> pd.DataFrame:
    """Image statistics of 40 km squares on the lattice, with each point's lon/lat."""
    root = tmp_path_factory.mktemp("coarse")
    imagery.write(root, COARSE)
    stats = reader.entity_image_stats(root, {k: Square(lon, lat, 40_000.0) for k, (lon, lat) in POINTS.items()})
    return stats.assign(lon=stats["entity"].map(lambda e: POINTS[e][0]),
                        lat=stats["entity"].map(lambda e: POINTS[e][1]))


def test_tiny_mosaic_is_a_regular_grid_of_named_tiles_that_reads_cleanly(tiny):
    grid = MosaicGrid.of(TINY)
    assert (grid.n_rows, grid.n_cols, grid.left, grid.top) == (3, 5, -2_400_000.0, 3_200_000.0)
    ids = [f"r{r:02d}c{c:02d}" for r in range(3) for c in range(5)]
    assert sorted(folder_bytes(tiny)) == sorted([f"{t}_relief.tif" for t in ids] + [f"{t}_ndvi_{d}.tif" for t in ids
                                                                              for d in DATES])
    read = {t.name: t.frame for t in reader.read(tiny, reader.Params())}
    assert len(read["quarantine"]) == 0 and len(read["files"]) == 75
    rasters = read["rasters"].set_index("file")
    assert set(rasters["entity"]) == set(ids) and set(rasters["crs_epsg"]) == {5070}
    assert set(rasters["dtype"]) == {"float32"} and set(rasters["nodata"]) == {-9999.0}
    assert set(rasters[["width_px", "height_px", "res_x", "res_y"]].itertuples(index=False)) == {
        (64, 64, 16000.0, 16000.0)}
    tile_m = 64 * 16000.0
    right = rasters.loc["r02c04_relief.tif"]
    assert (right["bounds_right"], right["bounds_bottom"]) == (-2_400_000 + 5 * tile_m, 3_200_000 - 3 * tile_m)
    assert right["bounds_right"] >= CONUS_ALBERS_M[2] and right["bounds_bottom"] <= CONUS_ALBERS_M[1]
    assert rasters.loc["r01c02_relief.tif", "bounds_left"] == rasters.loc["r01c01_relief.tif", "bounds_right"]
    ndvi = rasters[rasters["variable"] == "ndvi"]
    assert sorted({d.strftime("%Y%m%d") for d in ndvi["date"]}) == DATES
    with rasterio.open(tiny / "r01c02_ndvi_20200715.tif") as dataset:
        structure = dataset.tags(ns="IMAGE_STRUCTURE")
        assert (structure["COMPRESSION"], structure["PREDICTOR"]) == ("LZW", "3")
        assert dataset.descriptions == ("ndvi",) and dataset.units == ("1",)
        assert dataset.tags(1) == {"DATE": "2020-07-15"} and dataset.block_shapes == [(64, 64)]


def test_same_seed_gives_identical_bytes_and_another_seed_differs(tmp_path, tiny):
    imagery.write(tmp_path / "again", TINY)
    assert folder_bytes(tmp_path / "again") == folder_bytes(tiny)
    imagery.write(tmp_path / "other", TINY.model_copy(update={"seed": 7}))
    assert folder_bytes(tmp_path / "other") != folder_bytes(tiny)


def test_no_tiff_datetime_and_no_side_cars(tiny):
    for path in tiny.iterdir():
        assert path.suffix == ".tif"
        assert 324 in check_tiff(path).directories[0]  # TileOffsets: tiled, not striped
        assert all(DATETIME_TAG not in tags for tags in check_tiff(path).directories)
        assert not re.search(rb"\d{4}:\d{2}:\d{2} \d{2}:\d{2}:\d{2}", path.read_bytes())


def test_tiles_join_seamlessly_and_point_to_the_right_place(tiny):
    grid = MosaicGrid.of(TINY)
    relief = mosaic(tiny, grid, "relief")
    steps = np.abs(np.diff(relief, axis=1))
    edges = steps[:, 63::64][:, :-1]  # the steps from the last column of a tile to the next tile's first
    inner = np.delete(steps, np.s_[63::64], axis=1)
    assert edges.mean() < 1.5 * inner.mean()
    with rasterio.open(tiny / "r01c01_relief.tif") as dataset:
        x, y = dataset.xy(10, 20)
        (lon,), (lat,) = transform_points(dataset.crs, "EPSG:4326", [x], [y])
        sample = reader.sample_points(tiny / "r01c01_relief.tif", 1, {"p": (lon, lat)}).iloc[0]
    assert (sample["row"], sample["col"]) == (10, 20) and sample["value"] == relief[64 + 10, 64 + 20]


def test_clouds_are_nodata_in_ndvi_only(tiny):
    stats = {t.name: t.frame for t in reader.read(tiny, reader.Params())}["band_stats"]
    relief = stats[stats["file"].str.endswith("_relief.tif")]
    ndvi = stats[~stats["file"].str.endswith("_relief.tif")]
    assert (relief["masked_px"] == 0).all()
    assert (ndvi["masked_px"] > 0).any() and 0.02 < ndvi["masked_px"].sum() / (ndvi["valid_px"].sum() +
                                                                              ndvi["masked_px"].sum()) < 0.3
    assert ndvi["min"].min() >= -0.1 and ndvi["max"].max() <= 0.95


def test_every_profile_samples_the_same_landscape(coarse, tiny):
    relief = coarse[coarse["variable"] == "relief"].set_index("entity")["mean"]
    squares = {k: Square(lon, lat, 40_000.0) for k, (lon, lat) in POINTS.items()}
    tiny_relief = reader.entity_image_stats(tiny, squares).query("variable == 'relief'").set_index("entity")["mean"]
    assert spearmanr(relief, tiny_relief.loc[relief.index]).statistic > 0.95


def test_relief_is_high_and_rough_in_the_west(coarse):
    relief = coarse[coarse["variable"] == "relief"]
    west, east = relief[relief["lon"] < -104], relief[relief["lon"] > -95]
    assert west["mean"].median() > east["mean"].median() + 800
    assert spearmanr(relief["mean"], relief["std"]).statistic > 0.6  # mountains are rougher


def test_ndvi_has_a_summer_peak_that_grows_with_latitude(coarse):
    ndvi = coarse[coarse["variable"] == "ndvi"].assign(month=lambda f: f["date"].map(lambda d: d.month))
    wide = ndvi.pivot(index="entity", columns="month", values="mean").dropna()
    assert len(wide) >= 25
    lat = coarse.groupby("entity")["lat"].first().loc[wide.index]
    lon = coarse.groupby("entity")["lon"].first().loc[wide.index]
    assert (wide[7] > wide[1]).all() and (wide[7] > wide[10]).mean() > 0.9
    assert spearmanr((wide[7] - wide[1]) / wide[7], lat).statistic > 0.5
    relief = coarse[coarse["variable"] == "relief"].set_index("entity")["mean"].loc[wide.index]
    assert spearmanr(wide[7], relief).statistic < -0.5  # high, dry places are browner
    assert wide[7][lon < -104].median() < wide[7][lon > -95].median() - 0.2


def test_params_are_validated():
    for bad in ({"tile_px": 40}, {"crs": "EPSG:4326"}, {"dates": ["2020-01-15"]}, {"dates": ["20200230"]},
                {"dates": ["20200115", "20200115"]}, {"unknown": 1}, {"pixel_m": 0},
                {"bounds_m": (0, 0, -1, 1)}, {"pixel_m": 10, "tile_px": 16}):
        with pytest.raises(ValidationError):
            Params(**{"pixel_m": 16000, "tile_px": 64} | bad)
    assert Params(pixel_m=16000, tile_px=64, dates=["20201015", "20200115"]).dates == ["20200115", "20201015"]
