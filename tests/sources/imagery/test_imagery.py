"""GeoTIFF reader: the real rasterio samples in ../shared/realdata, generated rasters, bad input."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rasterio
from rasterio.transform import from_origin
from rasterio.warp import transform as transform_points
from scibench_testing.imagery import GEOTIFF, needs_real, tables, write_raster

from stages.repository import validate_table
from stages.sources import imagery
from stages.sources.imagery import stats as imagery_stats

REAL_FILES = ("RGB.byte.tif", "float_raster_with_nodata.tif", "shade.tif")
CUSTOM_PROJ4 = ("+proj=aea +lat_0=40 +lon_0=-100 +lat_1=30 +lat_2=50 +x_0=0 +y_0=0 +ellps=GRS80"
                " +units=m +no_defs")


# --- real files -----------------------------------------------------------------------------------


@needs_real
@pytest.mark.parametrize("name", REAL_FILES)
def test_band_stats_of_every_real_file_equal_numpy_on_the_masked_read(name):
    stats = tables(GEOTIFF)["band_stats"].frame.set_index(["file", "band"])
    with rasterio.open(GEOTIFF / name) as dataset:
        for band in dataset.indexes:
            masked = dataset.read(band, masked=True)
            row = stats.loc[(name, band)]
            assert row["valid_px"] == masked.count()
            assert row["masked_px"] == np.ma.count_masked(masked)
            assert row["min"] == masked.min() and row["max"] == masked.max()
            assert row["mean"] == pytest.approx(float(masked.astype(np.float64).mean()), rel=1e-12)
            assert row["std"] == pytest.approx(float(masked.astype(np.float64).std()), rel=1e-12)


@needs_real
def test_real_masked_counts_and_nodata_per_file():
    read = tables(GEOTIFF)
    stats = read["band_stats"].frame.set_index(["file", "band"])
    assert stats.loc[("RGB.byte.tif", 1), "masked_px"] == 185162
    assert stats.loc[("RGB.byte.tif", 1), "valid_px"] == 791 * 718 - 185162
    assert stats.loc[("float_raster_with_nodata.tif", 1), ["valid_px", "masked_px"]].tolist() == [98, 58]
    assert stats.loc[("float_raster_with_nodata.tif", 1), ["min", "max"]].tolist() == [0.0, 0.25]
    shade = stats.loc[("shade.tif", 1)]
    assert shade[["valid_px", "masked_px", "min", "max"]].tolist() == [124375, 924201, 0.0, 0.0]
    with rasterio.open(GEOTIFF / "shade.tif") as dataset:
        assert set(np.unique(dataset.read(1)).tolist()) == {0, 255}  # 255 is the nodata
    rasters = read["rasters"].frame.set_index(["file", "band"])
    assert rasters["nodata"].tolist() == [0.0, 0.0, 0.0, float(np.float32(-3.4e38)), 255.0]
    assert rasters["nodata_kind"].unique().tolist() == ["value"]
    assert len(read["quarantine"].frame) == 0
    for table in read.values():
        validate_table(table)


@needs_real
def test_real_grids_and_crs_including_a_crs_without_epsg_code():
    rasters = tables(GEOTIFF)["rasters"].frame.set_index(["file", "band"])
    rgb = rasters.loc[("RGB.byte.tif", 2)]
    assert rgb[["width_px", "height_px", "dtype", "crs_epsg", "crs_unit"]].tolist() == [
        791, 718, "uint8", 32618, "metre"]
    assert rgb[["bounds_left", "bounds_bottom", "bounds_right", "bounds_top"]].tolist() == [
        101985.0, 2611485.0, 339315.0, 2826915.0]
    assert rgb[["transform_c", "transform_f", "transform_b", "transform_d"]].tolist() == [
        101985.0, 2826915.0, 0.0, 0.0]
    assert rgb["res_x"] == pytest.approx(300.0379, abs=1e-4)
    assert rgb["res_y"] == pytest.approx(300.0418, abs=1e-4)
    laea = rasters.loc[("float_raster_with_nodata.tif", 1)]
    assert pd.isna(laea["crs_epsg"]) and laea["dtype"] == "float32"
    assert "Lambert_Azimuthal_Equal_Area" in laea["crs_wkt"]
    assert 'PARAMETER["latitude_of_center",52]' in laea["crs_wkt"]
    assert laea[["res_x", "res_y"]].tolist() == [500.0, 500.0]
    assert rasters.loc[("shade.tif", 1), "crs_epsg"] == 3857


@needs_real
def test_aux_xml_side_car_does_not_change_any_result(tmp_path):
    bare, hostile = tmp_path / "bare", tmp_path / "hostile"
    for folder in (bare, hostile):
        folder.mkdir()
        shutil.copyfile(GEOTIFF / "RGB.byte.tif", folder / "RGB.byte.tif")
    (hostile / "RGB.byte.tif.aux.xml").write_text(
        '<PAMDataset><Metadata><MDI key="DATE">2001-01-01</MDI></Metadata>'
        '<PAMRasterBand band="1"><Description>fake</Description><NoDataValue>7</NoDataValue>'
        '<UnitType>K</UnitType><Metadata><MDI key="STATISTICS_MEAN">1</MDI></Metadata>'
        '</PAMRasterBand></PAMDataset>')
    results = [tables(folder) for folder in (bare, hostile, GEOTIFF)]
    for name in ("rasters", "band_stats"):
        first = results[0][name].frame
        assert results[1][name].frame.equals(first)
        assert results[2][name].frame.query("file == 'RGB.byte.tif'").reset_index(drop=True).equals(first)
    assert sorted(p.name for p in bare.iterdir()) == ["RGB.byte.tif"]  # reading wrote no side-car


@needs_real
def test_chunked_windowed_reads_give_the_same_statistics(monkeypatch):
    whole = tables(GEOTIFF)["band_stats"].frame
    windows = []
    original = imagery_stats.read_valid

    def spy(path, dataset, band, window):
        windows.append((Path(path).name, window))
        return original(path, dataset, band, window)

    monkeypatch.setattr(imagery_stats, "CHUNK_PIXELS", 4096)
    monkeypatch.setattr(imagery_stats, "read_valid", spy)
    chunked = tables(GEOTIFF)["band_stats"].frame
    rgb = [w for name, w in windows if name == "RGB.byte.tif"]
    assert len(rgb) == 3 * 240 and max(w.width * w.height for w in rgb) <= 4096  # 3-row strips
    shade = [w for name, w in windows if name == "shade.tif"]
    assert [(w.row_off, w.height) for w in shade] == [(0, 256), (256, 256), (512, 256), (768, 256)]
    exact = ["valid_px", "masked_px", "min", "max"]
    assert chunked[exact].equals(whole[exact])
    np.testing.assert_allclose(chunked[["mean", "std"]], whole[["mean", "std"]], rtol=1e-12)


# --- generated rasters: zonal statistics and point samples ----------------------------------------

GRIDS = {  # CRS -> (origin x, origin y, pixel size) of a 8 x 10 grid
    "EPSG:4326": (-75.0, 41.0, 0.01),
    "EPSG:32618": (500_000.0, 4_500_000.0, 100.0),
    CUSTOM_PROJ4: (1_200_000.0, 300_000.0, 250.0),
}


def grid_raster(tmp_path: Path, crs: str, data: np.ndarray, nodata: float | None) -> Path:
    x0, y0, size = GRIDS[crs]
    name = {"EPSG:4326": "geo.tif", "EPSG:32618": "utm.tif"}.get(crs, "custom.tif")
    return write_raster(tmp_path / name, data, crs=crs, transform=from_origin(x0, y0, size, size),
                        nodata=nodata)


def native_box(crs: str, rows: tuple[int, int], cols: tuple[int, int]) -> list[tuple[float, float]]:
    """The ring along the pixel edges of rows [r0, r1) and cols [c0, c1), in the raster's CRS."""
    x0, y0, size = GRIDS[crs]
    left, right = x0 + cols[0] * size, x0 + cols[1] * size
    top, bottom = y0 - rows[0] * size, y0 - rows[1] * size
    return [(left, bottom), (right, bottom), (right, top), (left, top)]


def to_lonlat(crs: str, ring: list[tuple[float, float]],
              target: str = "EPSG:4326") -> list[tuple[float, float]]:
    lons, lats = transform_points(crs, target, *zip(*ring, strict=True))
    return list(zip(lons, lats, strict=True))


def other_crs(crs: str) -> str:
    """The CRS a zone is also given in: lon/lat, or web Mercator for a lon/lat raster."""
    return "EPSG:3857" if crs == "EPSG:4326" else "EPSG:4326"


@pytest.mark.parametrize("crs", list(GRIDS))
def test_zonal_mean_over_known_pixels_by_hand(tmp_path, crs):
    data = np.arange(80, dtype=np.int16).reshape(8, 10)  # pixel (r, c) holds 10 r + c
    data[3, 4] = -1  # nodata inside the zone
    path = grid_raster(tmp_path, crs, data, nodata=-1)
    ring = native_box(crs, rows=(2, 5), cols=(3, 7))  # 12 pixels, mean 10 * 3 + 4.5 = 34.5
    expected = {"pixel_count": 12, "count": 11, "mean": (34.5 * 12 - 34) / 11, "min": 23.0,
                "max": 46.0}
    for zone, zone_crs in ((ring, crs), (to_lonlat(crs, ring, other_crs(crs)), other_crs(crs))):
        row = imagery.zonal_stats(path, 1, {"e": zone}, crs=zone_crs).iloc[0]
        assert row["entity"] == "e"
        assert {k: row[k] for k in expected} == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("crs", list(GRIDS))
def test_zonal_stats_on_seeded_floats_match_numpy_and_the_lonlat_polygon_hits_the_same_pixels(tmp_path, crs):
    data = np.random.default_rng(7).normal(300, 25, (8, 10)).astype(np.float32)
    data[np.random.default_rng(8).random((8, 10)) < 0.2] = -9999
    path = grid_raster(tmp_path, crs, data, nodata=-9999)
    zones = {"a": native_box(crs, (0, 4), (0, 5)), "b": native_box(crs, (3, 8), (6, 10)),
             "outside": native_box(crs, (20, 22), (20, 22))}
    native = imagery.zonal_stats(path, 1, zones, crs=crs)
    target = other_crs(crs)
    lonlat = imagery.zonal_stats(path, 1, {k: to_lonlat(crs, v, target) for k, v in zones.items()},
                                 crs=target)
    assert native.equals(lonlat)
    assert native["entity"].tolist() == ["a", "b", "outside"]
    for entity, block in (("a", data[0:4, 0:5]), ("b", data[3:8, 6:10])):
        values = block[block != -9999].astype(np.float64)
        row = native.set_index("entity").loc[entity]
        assert row[["pixel_count", "count"]].tolist() == [block.size, values.size]
        assert row["mean"] == pytest.approx(values.mean(), rel=1e-12)
        assert row["std"] == pytest.approx(values.std(), rel=1e-9)
        assert (row["min"], row["max"]) == (values.min(), values.max())
    outside = native.set_index("entity").loc["outside"]
    assert outside[["pixel_count", "count"]].tolist() == [0, 0] and outside[["mean", "std"]].isna().all()


def test_zonal_stats_accepts_bounding_boxes_in_any_crs(tmp_path):
    data = np.arange(80, dtype=np.float32).reshape(8, 10)
    path = grid_raster(tmp_path, "EPSG:32618", data, nodata=None)
    x0, y0, _ = GRIDS["EPSG:32618"]
    box = (x0 + 300, y0 - 500, x0 + 700, y0 - 200)  # rows 2-4, cols 3-6
    row = imagery.zonal_stats(path, 1, {"box": box}, crs="EPSG:32618").iloc[0]
    assert row[["pixel_count", "count", "mean", "min", "max"]].tolist() == [12, 12, 34.5, 23.0, 46.0]
    with pytest.raises(ValueError, match="min < max"):
        imagery.zonal_stats(path, 1, {"bad": (x0 + 700, y0, x0 + 300, y0 - 100)}, crs="EPSG:32618")


@pytest.mark.parametrize("crs", list(GRIDS))
def test_sample_points_reprojects_and_nulls_nodata_and_outside(tmp_path, crs):
    data = np.arange(80, dtype=np.float32).reshape(8, 10)
    data[6, 1] = -9999
    path = grid_raster(tmp_path, crs, data, nodata=-9999)
    x0, y0, size = GRIDS[crs]
    centre = {(r, c): (x0 + (c + 0.5) * size, y0 - (r + 0.5) * size) for r, c in ((2, 7), (6, 1))}
    native = centre | {"far": (x0 - 50 * size, y0)}
    lonlat = {str(k): v for k, v in zip(native, to_lonlat(crs, list(native.values())), strict=True)}
    samples = imagery.sample_points(path, 1, lonlat).set_index("entity")
    assert samples.loc["(2, 7)", ["row", "col", "inside", "value"]].tolist() == [2, 7, True, 27.0]
    assert samples.loc["(6, 1)", ["row", "col", "inside"]].tolist() == [6, 1, True]
    assert pd.isna(samples.loc["(6, 1)", "value"])
    far = samples.loc["far"]
    assert not far["inside"] and pd.isna(far["row"]) and pd.isna(far["value"])
    assert samples.loc["(2, 7)", "x"] == pytest.approx(centre[(2, 7)][0], abs=size * 1e-6)


def test_files_inventory_records_relative_path_raw_dir_size_and_sha256(tmp_path):
    data = np.arange(80, dtype=np.float32).reshape(8, 10)
    first = write_raster(tmp_path / "raw" / "r00c00_ndvi_20200715.tif", data, nodata=-9999)
    second = write_raster(tmp_path / "raw" / "scenes" / "r00c00_relief.tif", data * 2, nodata=-9999)
    (tmp_path / "raw" / "notes.txt").write_text("not a raster")
    read = tables(tmp_path / "raw")
    files = read["files"].frame
    assert files["file"].tolist() == ["r00c00_ndvi_20200715.tif", "scenes/r00c00_relief.tif"]
    assert files["raw_dir"].tolist() == [(tmp_path / "raw").as_posix()] * 2
    assert files["size_bytes"].tolist() == [first.stat().st_size, second.stat().st_size]
    assert files["sha256"].tolist() == [hashlib.sha256(p.read_bytes()).hexdigest() for p in (first, second)]
    assert read["files"].keys == ("file",) and read["files"].units["size_bytes"] == "B"
    assert set(files["file"]) == set(read["rasters"].frame["file"])
    validate_table(read["files"])


@needs_real
def test_zonal_stats_on_the_real_utm_raster_in_native_and_lonlat_coordinates():
    path = GEOTIFF / "RGB.byte.tif"
    with rasterio.open(path) as dataset:
        block = dataset.read(1, masked=True)[100:200, 300:420].astype(np.float64)
        left, top = dataset.transform @ (300, 100)
        right, bottom = dataset.transform @ (420, 200)
    ring = [(left, bottom), (right, bottom), (right, top), (left, top)]
    native = imagery.zonal_stats(path, 1, {"zone": ring}, crs="EPSG:32618").iloc[0]
    lonlat = imagery.zonal_stats(path, 1, {"zone": to_lonlat("EPSG:32618", ring)}).iloc[0]
    assert native.equals(lonlat)
    assert native[["pixel_count", "count"]].tolist() == [100 * 120, block.count()]
    assert native["mean"] == pytest.approx(block.mean(), rel=1e-12)
    assert native["std"] == pytest.approx(block.std(), rel=1e-9)
