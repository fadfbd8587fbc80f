"""Synthetic imagery tiles: native GeoTIFF, determinism, georeference, relief and NDVI structure."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rasterio
from pydantic import ValidationError
from rasterio.warp import transform as transform_points
from scipy.stats import spearmanr

from stages.sources import imagery as reader
from stages.sources.imagery_tiff import DATETIME_TAG, check_tiff
from stages.synthesize import imagery
from stages.synthesize.imagery import Params
from stages.tables import RawFormatError

TINY = Params(n_entities=4, tile_px=32)
DEFAULT = Params(n_entities=20, tile_px=128)
DATES = ["20200115", "20200415", "20200715", "20201015"]


def files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir())}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    imagery.write(root, TINY)
    return root


@pytest.fixture(scope="module")
def default(tmp_path_factory) -> pd.DataFrame:
    """Image statistics of the default profile in a 1 km buffer, with each entity's lon/lat."""
    root = tmp_path_factory.mktemp("default")
    imagery.write(root, DEFAULT)
    entities = imagery.draw_entities(DEFAULT.seed, DEFAULT.n_entities)
    stats = reader.entity_image_stats(root, entities, buffer_m=1000)
    stats["lon"] = stats["entity"].map(lambda e: entities[e][0])
    stats["lat"] = stats["entity"].map(lambda e: entities[e][1])
    return stats


def test_tiny_tiles_are_named_typed_and_read_cleanly(tiny):
    names = sorted(files(tiny))
    entities = sorted(imagery.draw_entities(TINY.seed, 4))
    assert names == sorted([f"{e}_relief.tif" for e in entities]
                           + [f"{e}_ndvi_{d}.tif" for e in entities for d in DATES])
    read = {t.name: t.frame for t in reader.read(tiny, reader.Params())}
    assert len(read["quarantine"]) == 0
    rasters = read["rasters"]
    assert len(rasters) == 20 and set(rasters["entity"]) == set(entities)
    assert set(rasters["dtype"]) == {"float32"} and set(rasters["nodata"]) == {-9999.0}
    assert set(rasters["compression"]) == {"lzw"} and set(rasters["crs_epsg"]) == {5070}
    assert set(rasters[["width_px", "height_px", "res_x", "res_y"]].itertuples(index=False)) == {
        (32, 32, 30.0, 30.0)}
    ndvi = rasters[rasters["variable"] == "ndvi"]
    assert sorted({d.strftime("%Y%m%d") for d in ndvi["date"]}) == DATES
    assert rasters.loc[rasters["variable"] == "relief", "date"].isna().all()
    with rasterio.open(tiny / f"{entities[0]}_ndvi_20200715.tif") as dataset:
        assert dataset.block_shapes == [(32, 32)]
        structure = dataset.tags(ns="IMAGE_STRUCTURE")
        assert (structure["COMPRESSION"], structure["PREDICTOR"]) == ("LZW", "3")
        assert dataset.descriptions == ("ndvi",) and dataset.units == ("1",)
        assert dataset.tags(1) == {"DATE": "2020-07-15"}


def test_same_seed_gives_identical_bytes_and_another_seed_differs(tmp_path, tiny):
    imagery.write(tmp_path / "again", TINY)
    assert files(tmp_path / "again") == files(tiny)
    imagery.write(tmp_path / "other", TINY.model_copy(update={"seed": 7}))
    assert files(tmp_path / "other") != files(tiny)


def test_no_tiff_datetime_and_no_side_cars(tiny):
    for path in tiny.iterdir():
        assert path.suffix == ".tif"
        assert 324 in check_tiff(path).directories[0]  # TileOffsets: tiled, not striped
        assert all(DATETIME_TAG not in tags for tags in check_tiff(path).directories)
        assert not re.search(rb"\d{4}:\d{2}:\d{2} \d{2}:\d{2}:\d{2}", path.read_bytes())
        with rasterio.open(path) as dataset:
            assert "TIFFTAG_DATETIME" not in dataset.tags()


def test_centre_pixel_maps_back_to_the_entity(tiny):
    half = TINY.tile_px // 2
    for entity, (lon, lat) in imagery.draw_entities(TINY.seed, 4).items():
        path = tiny / f"{entity}_relief.tif"
        with rasterio.open(path) as dataset:
            x, y = dataset.xy(half, half)  # pixel centre
            (ex,), (ey,) = transform_points("EPSG:4326", dataset.crs, [lon], [lat])
            assert abs(ex - x) <= 15.0 and abs(ey - y) <= 15.0  # half a 30 m pixel
            (clon,), (clat,) = transform_points(dataset.crs, "EPSG:4326", [x], [y])
        assert abs(clon - lon) < 4e-4 and abs(clat - lat) < 3e-4
        sample = reader.sample_points(path, 1, {entity: (lon, lat)}).iloc[0]
        assert (sample["row"], sample["col"], sample["inside"]) == (half, half, True)


def test_clouds_are_nodata_in_ndvi_only(tiny):
    stats = {t.name: t.frame for t in reader.read(tiny, reader.Params())}["band_stats"]
    relief = stats[stats["file"].str.endswith("_relief.tif")]
    ndvi = stats[~stats["file"].str.endswith("_relief.tif")]
    assert (relief["masked_px"] == 0).all()
    assert (ndvi["masked_px"] > 0).any() and (ndvi["valid_fraction"] > 0.05).all()
    assert ndvi["min"].min() >= -0.1 and ndvi["max"].max() <= 0.95


def test_relief_is_a_smooth_rough_surface_high_in_the_west(default, tmp_path):
    relief = default[default["variable"] == "relief"]
    west, east = relief[relief["lon"] < -104], relief[relief["lon"] > -95]
    assert len(west) >= 3 and len(east) >= 3
    assert west["mean"].median() > east["mean"].median() + 800
    assert spearmanr(relief["mean"], relief["std"]).statistic > 0.6  # mountains are rougher
    imagery.write(tmp_path, Params(n_entities=1, tile_px=128))
    with rasterio.open(next(tmp_path.glob("*_relief.tif"))) as dataset:
        dem = dataset.read(1).astype(np.float64)
    variogram = [np.mean((dem[:, lag:] - dem[:, :-lag]) ** 2) / 2 for lag in (1, 4, 16, 64)]
    assert all(a < b for a, b in zip(variogram, variogram[1:], strict=False))
    assert variogram[0] < variogram[-1] / 20  # neighbours agree far better than distant pixels


def test_ndvi_has_a_summer_peak_that_grows_with_latitude(default):
    ndvi = default[default["variable"] == "ndvi"].assign(
        month=lambda f: f["date"].map(lambda d: d.month))
    wide = ndvi.pivot(index="entity", columns="month", values="mean")
    lat = default.groupby("entity")["lat"].first().loc[wide.index]
    assert (wide[7] > wide[1]).all() and (wide[7] > wide[4]).all() and (wide[7] > wide[10]).all()
    relative_amplitude = (wide[7] - wide[1]) / wide[7]
    assert spearmanr(relative_amplitude, lat).statistic > 0.6
    relief = default[default["variable"] == "relief"].set_index("entity")["mean"].loc[wide.index]
    assert spearmanr(wide[7], relief).statistic < -0.5  # high, dry places are browner
    lon = default.groupby("entity")["lon"].first().loc[wide.index]
    assert wide[7][lon < -104].median() < wide[7][lon > -95].median() - 0.2


def test_entities_file_chooses_the_points(tmp_path):
    csv = tmp_path / "entities.csv"
    csv.write_bytes(b"entity_id,lon,lat\r\n01022500,-68.0,44.6\r\nUS-EDN,-122.1,37.6\r\n"
                    b"03015500,-79.3,41.9\r\n")
    imagery.write(tmp_path / "out", Params(n_entities=2, tile_px=16, dates=["20200601"],
                                          entities_file=str(csv)))
    assert sorted(files(tmp_path / "out")) == [
        "01022500_ndvi_20200601.tif", "01022500_relief.tif",
        "03015500_ndvi_20200601.tif", "03015500_relief.tif"]
    sample = reader.sample_points(tmp_path / "out" / "03015500_relief.tif", 1,
                                  {"03015500": (-79.3, 41.9)}).iloc[0]
    assert (sample["row"], sample["col"]) == (8, 8)
    imagery.write(tmp_path / "all", Params(n_entities=3, tile_px=16, dates=["20200601"],
                                          entities_file=str(csv)))
    every = files(tmp_path / "all")
    assert len(every) == 6 and all(every[name] == data for name, data in files(tmp_path / "out").items())


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("", 1, "file is empty"),
    ("id;lon;lat\na;1;2\n", 1, "header must be 'entity_id,lon,lat', found 'id;lon;lat'"),
    ("entity_id,lon,lat\na,-70,40\nb,-7x,40\n", 3, "value '-7x' is not a number"),
    ("entity_id,lon,lat\na,-70,40\na,-71,41\n", 3, "duplicated entity_id a (first at line 2)"),
    ("entity_id,lon,lat\na,-70\n", 2, "expected 3 ','-separated fields, found 2"),
    ("entity_id,lon,lat\na b,-70,40\n", 2, "entity_id 'a b' cannot be used in a file name"),
    ("entity_id,lon,lat\na,-70,95\n", 2, "lon/lat (-70.0, 95.0) out of range"),
    ("entity_id,lon,lat\n", 2, "no entities"),
])
def test_bad_entities_file(tmp_path, text, line, problem):
    path = tmp_path / "entities.csv"
    path.write_text(text)
    with pytest.raises(RawFormatError) as caught:
        imagery.read_entities(path)
    assert (caught.value.path, caught.value.line, caught.value.problem) == (str(path), line, problem)


def test_params_are_validated():
    for bad in ({"tile_px": 40}, {"crs": "EPSG:4326"}, {"dates": ["2020-01-15"]},
                {"dates": ["20200230"]}, {"dates": ["20200115", "20200115"]}, {"unknown": 1}):
        with pytest.raises(ValidationError):
            Params(**{"n_entities": 2, "tile_px": 32} | bad)
    assert Params(n_entities=2, tile_px=32, dates=["20201015", "20200115"]).dates == [
        "20200115", "20201015"]
