"""GeoTIFF reader: the real rasterio samples in ../shared/realdata, generated rasters, bad input."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rasterio
from pydantic import ValidationError
from rasterio.control import GroundControlPoint
from rasterio.transform import from_origin
from rasterio.warp import transform as transform_points

from stages.repository import validate_table, write_tables
from stages.sources import imagery, imagery_stats
from stages.sources.imagery import Params, RawFormatError

REALDATA = Path(__file__).resolve().parents[2].parent / "shared" / "realdata"
GEOTIFF = REALDATA / "geotiff_rasterio"
needs_real = pytest.mark.skipif(
    not GEOTIFF.is_dir(), reason=f"real GeoTIFF samples not found at {GEOTIFF} (shared/realdata)"
)
REAL_FILES = ("RGB.byte.tif", "float_raster_with_nodata.tif", "shade.tif")
CUSTOM_PROJ4 = ("+proj=aea +lat_0=40 +lon_0=-100 +lat_1=30 +lat_2=50 +x_0=0 +y_0=0 +ellps=GRS80"
                " +units=m +no_defs")


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


def error_of(path: Path) -> RawFormatError:
    with pytest.raises(RawFormatError) as caught:
        imagery.read_tiff(path)
    assert caught.value.path == str(path)
    return caught.value


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


def test_entity_image_stats_uses_named_tiles_or_any_covering_tile(tmp_path):
    data = np.arange(80, dtype=np.float32).reshape(8, 10)
    data[4, 5] = -9999
    write_raster(tmp_path / "siteA_ndvi_20200715.tif", data, nodata=-9999)
    write_raster(tmp_path / "siteA_relief.tif", data * 2, nodata=-9999)
    write_raster(tmp_path / "scenes" / "scene.tif", data + 1000, nodata=-9999)
    x0, y0, size = GRIDS["EPSG:32618"]
    site = to_lonlat("EPSG:32618", [(x0 + 5.5 * size, y0 - 4.5 * size)])[0]  # centre of (4, 5)
    away = to_lonlat("EPSG:32618", [(x0 + 2.5 * size, y0 - 1.5 * size)])[0]  # centre of (1, 2)
    nowhere = (-120.0, 40.0)
    stats = imagery.entity_image_stats(tmp_path, {"siteA": site, "siteB": away, "siteC": nowhere},
                                       buffer_m=150)  # pixel centres within +-150 m: 3 x 3
    assert stats[["entity", "variable", "file"]].values.tolist() == [
        ["siteA", "ndvi", "siteA_ndvi_20200715.tif"], ["siteA", "relief", "siteA_relief.tif"],
        ["siteB", "ndvi", "siteA_ndvi_20200715.tif"], ["siteB", "relief", "siteA_relief.tif"],
        ["siteB", "scene_b1", "scenes/scene.tif"]]
    first = stats.iloc[0]
    block = data[3:6, 4:7]
    assert first["date"] == dt.date(2020, 7, 15) and pd.isna(stats.iloc[1]["date"])
    assert first["valid_fraction"] == pytest.approx(8 / 9) and first["valid_count"] == 8
    assert first["mean"] == pytest.approx(block[block != -9999].mean())
    assert stats.iloc[4]["mean"] == pytest.approx((data[0:3, 1:4] + 1000).mean())


# --- bad input ------------------------------------------------------------------------------------

ONES = np.ones((8, 10), dtype=np.float32)


def test_missing_georeference_names_the_file(tmp_path):
    error = error_of(write_raster(tmp_path / "nocrs.tif", ONES, crs=None))
    assert (error.line, error.problem) == (None, "no coordinate reference system (missing georeference)")
    with pytest.warns(rasterio.errors.NotGeoreferencedWarning):
        path = write_raster(tmp_path / "identity.tif", ONES, transform=rasterio.Affine.identity())
    error = error_of(path)
    assert (error.line, error.problem) == (None, "identity geotransform (missing georeference)")


def test_ground_control_points_only(tmp_path):
    path = tmp_path / "gcps.tif"
    gcps = [GroundControlPoint(0, 0, 5e5, 4.5e6), GroundControlPoint(8, 10, 5.01e5, 4.49e6),
            GroundControlPoint(0, 10, 5.01e5, 4.5e6)]
    with rasterio.open(path, "w", driver="GTiff", width=10, height=8, count=1, dtype="uint8") as out:
        out.write(np.ones((1, 8, 10), np.uint8))
        out.gcps = (gcps, rasterio.crs.CRS.from_epsg(32618))
    assert error_of(path).problem == "georeferenced only by ground control points; warp it to a grid first"


def test_bounds_impossible_for_the_crs(tmp_path):
    utm_as_degrees = write_raster(tmp_path / "a.tif", ONES, crs="EPSG:4326")
    assert error_of(utm_as_degrees).problem == (
        "bounds (500000.0, 4499200.0, 501000.0, 4500000.0) are impossible for the geographic CRS "
        "EPSG:4326 (longitude must lie in [-180, 360], latitude in [-90, 90])")
    off_earth = write_raster(tmp_path / "b.tif", ONES, transform=from_origin(5e7, 4.5e8, 100, 100))
    assert error_of(off_earth).problem == (
        "bounds (50000000.0, 449999200.0, 50001000.0, 450000000.0) are impossible for the CRS "
        "EPSG:32618: no part of the raster maps to a longitude/latitude and back")
    degrees_as_metres = write_raster(tmp_path / "c.tif", ONES, transform=from_origin(-75, 41, 2.5e-4, 2.5e-4))
    assert error_of(degrees_as_metres).problem == (
        "pixel size 0.00025 metre is implausible for the projected CRS EPSG:32618; are the "
        "coordinates degrees?")


def test_local_crs_and_crs_in_feet(tmp_path):
    local = write_raster(tmp_path / "local.tif", ONES, crs='LOCAL_CS["site grid",UNIT["metre",1]]')
    assert error_of(local).problem == (
        'CRS LOCAL_CS["site grid"] is neither geographic nor projected (a local or '
        "engineering CRS cannot be placed on the Earth)")
    feet = write_raster(tmp_path / "feet.tif", ONES, crs="EPSG:2263",
                        transform=from_origin(980_000, 200_000, 100, 100))
    info = imagery.read_raster(feet)
    assert (info.crs_epsg, info.crs_unit, info.res) == (2263, "US survey foot", (100.0, 100.0))


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


@needs_real
def test_truncated_tiff_with_the_directory_at_the_end(tmp_path):
    data = (GEOTIFF / "RGB.byte.tif").read_bytes()
    path = tmp_path / "RGB.byte.tif"
    path.write_bytes(data[: len(data) // 2])
    error = error_of(path)
    assert (error.line, error.problem) == (
        None, f"file is truncated: image directory at byte 1743350 is past the end of the file "
              f"({len(data) // 2} bytes)")


def test_truncated_tiff_with_the_directory_first(tmp_path):
    whole = write_raster(tmp_path / "whole.tif", np.random.default_rng(1).random((64, 64)).astype(np.float32))
    data = whole.read_bytes()
    path = tmp_path / "cut.tif"
    path.write_bytes(data[:9000])
    error = error_of(path)
    assert error.line is None  # the last of the two 32-row strips ends where the file ended
    assert error.problem == (f"file is truncated: block 1 of image directory 0 ends at byte "
                             f"{len(data)} but the file has 9000 bytes")


def test_non_tiff_empty_and_directory_less_files(tmp_path):
    (tmp_path / "a.tif").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(40))
    assert error_of(tmp_path / "a.tif").problem == "not a TIFF file (starts with b'\\x89PNG\\r\\n\\x1a\\n')"
    (tmp_path / "b.tif").write_text("x,y\n1,2\n")
    assert error_of(tmp_path / "b.tif").problem == "not a TIFF file (starts with b'x,y\\n1,2\\n')"
    (tmp_path / "c.tif").write_bytes(b"")
    assert error_of(tmp_path / "c.tif").problem == "file is empty"
    (tmp_path / "d.tif").write_bytes(b"II*\x00\x00\x00\x00\x00")
    assert error_of(tmp_path / "d.tif").problem == "TIFF has no image directory"
    (tmp_path / "e.tif").write_bytes(b"MM\x00*\x00")
    assert error_of(tmp_path / "e.tif").problem == "file is truncated: 5 bytes end inside the header"


def patched_nodata(tmp_path: Path, text: bytes, dtype: str = "uint8") -> Path:
    """A GeoTIFF whose GDAL_NODATA tag holds `text` (3 characters, written over '111')."""
    path = write_raster(tmp_path / "base.tif", np.full((8, 10), 7, dtype=dtype), nodata=111)
    data = path.read_bytes()
    assert data.count(b"111\x00") == 1
    patched = tmp_path / f"{text.decode()}.tif"
    patched.write_bytes(data.replace(b"111\x00", text + b"\x00"))
    return patched


def test_nodata_nan_on_an_integer_band_and_junk_nodata(tmp_path):
    error = error_of(patched_nodata(tmp_path, b"nan"))
    assert (error.line, error.problem) == (None, "nodata is NaN, which a uint8 band cannot hold")
    error = error_of(patched_nodata(tmp_path, b"abc"))
    assert (error.line, error.problem) == (None, "GDAL_NODATA tag 'abc' is not a number")
    error = error_of(write_raster(tmp_path / "neg.tif", np.full((8, 10), 7, np.uint16), nodata=1.5))
    assert error.problem == "nodata 1.5 cannot occur in a uint16 band"


def test_nodata_nan_on_a_float_band_masks_nan_cells(tmp_path):
    data = np.arange(80, dtype=np.float32).reshape(8, 10)
    data[0, :3] = np.nan
    write_raster(tmp_path / "nan.tif", data, nodata=float("nan"))
    read = tables(tmp_path)
    assert read["band_stats"].frame.loc[0, ["valid_px", "masked_px", "min"]].tolist() == [77, 3, 3.0]
    assert read["band_stats"].frame.loc[0, "mean"] == pytest.approx(data[~np.isnan(data)].mean())
    write_raster(tmp_path / "none.tif", data, nodata=None)
    rasters = tables(tmp_path)["rasters"].frame
    assert rasters["file"].tolist() == ["nan.tif", "none.tif"]
    assert rasters["nodata_kind"].tolist() == ["nan", "none"] and rasters["nodata"].isna().all()


@pytest.mark.parametrize(("dtype", "value", "nodata", "shown"), [
    ("float32", -9999.0, None, "-9999"),
    ("float32", float(np.finfo(np.float32).min), 0.0, "-3.40282e+38"),
    ("float64", np.inf, -1.0, "inf"),
    ("int16", -32768, None, "-32768"),
])
def test_undeclared_fill_value_is_an_unexpected_sentinel(tmp_path, dtype, value, nodata, shown):
    data = np.ones((8, 10), dtype=dtype)
    data[2, 3] = value
    error = error_of(write_raster(tmp_path / "s.tif", data, nodata=nodata))
    assert (error.line, error.problem) == (
        1, f"band 1: unexpected sentinel {shown} at row 2, column 3 (declared nodata: {nodata})")


def test_a_declared_fill_value_is_masked_not_refused(tmp_path):
    data = np.ones((8, 10), dtype=np.int16)
    data[2, 3] = -32768
    write_raster(tmp_path / "dem.tif", data, nodata=-32768)
    assert tables(tmp_path)["band_stats"].frame.loc[0, ["valid_px", "masked_px"]].tolist() == [79, 1]


def test_dates_and_labels_from_tags_and_file_names(tmp_path):
    write_raster(tmp_path / "01022500_ndvi_20200715.tif", ONES)
    path = write_raster(tmp_path / "scene.tif", np.stack([ONES, ONES]))
    with rasterio.open(path, "r+") as dataset:
        dataset.update_tags(ACQUISITION_DATE="2019-05-01T10:30:00")
        dataset.update_tags(2, DATE="2019:05:02")
        dataset.set_band_description(2, "nir")
    rasters = tables(tmp_path)["rasters"].frame
    assert rasters[["file", "band", "entity", "variable", "date"]].values.tolist() == [
        ["01022500_ndvi_20200715.tif", 1, "01022500", "ndvi", dt.date(2020, 7, 15)],
        ["scene.tif", 1, pd.NA, pd.NA, dt.date(2019, 5, 1)],
        ["scene.tif", 2, pd.NA, "nir", dt.date(2019, 5, 2)],
    ]


def test_bad_dates_in_names_and_tags(tmp_path):
    error = error_of(write_raster(tmp_path / "a_ndvi_20201340.tif", ONES))
    assert (error.line, error.problem) == (None, "file name date 20201340 is not a valid date")
    path = write_raster(tmp_path / "b.tif", ONES)
    with rasterio.open(path, "r+") as dataset:
        dataset.update_tags(1, DATE="soon")
    error = error_of(path)
    assert (error.line, error.problem) == (1, "band 1: tag DATE='soon' is not a date")


def test_duplicated_entity_variable_and_date(tmp_path):
    write_raster(tmp_path / "a_ndvi_20200101.tif", ONES)
    duplicate = write_raster(tmp_path / "sub" / "a_ndvi_20200101.tif", ONES)
    with pytest.raises(RawFormatError) as caught:
        tables(tmp_path)
    assert (caught.value.path, caught.value.line, caught.value.problem) == (
        str(duplicate), 1, "band 1: duplicated entity 'a', variable 'ndvi', 2020-01-01 (first in "
                           "a_ndvi_20200101.tif band 1)")


def test_quarantine_keeps_the_good_files(tmp_path):
    write_raster(tmp_path / "good.tif", ONES)
    (tmp_path / "bad.tif").write_text("not an image")
    (tmp_path / "notes.txt").write_text("ignored")
    with pytest.raises(RawFormatError, match="not a TIFF file"):
        tables(tmp_path)
    read = tables(tmp_path, on_error="quarantine")
    assert read["quarantine"].frame.to_dict("records") == [
        {"file": str(tmp_path / "bad.tif"), "line": -1,
         "problem": "not a TIFF file (starts with b'not an i')"}]
    assert read["rasters"].frame["file"].tolist() == ["good.tif"]
    assert read["band_stats"].frame["file"].tolist() == ["good.tif"]
    for table in read.values():
        validate_table(table)


def test_empty_folder(tmp_path):
    with pytest.raises(RawFormatError) as caught:
        tables(tmp_path)
    assert caught.value.problem == "no GeoTIFF files (*.tif, *.tiff) in the folder"
    read = tables(tmp_path, on_error="quarantine")
    assert len(read["rasters"].frame) == len(read["band_stats"].frame) == 0
    assert len(read["quarantine"].frame) == 1
    for table in read.values():
        validate_table(table)


def test_params_reject_unknown_keys():
    with pytest.raises(ValidationError):
        Params(on_error="ignore")
    with pytest.raises(ValidationError):
        Params(bands=3)


@needs_real
def test_ingested_tables_are_byte_deterministic(tmp_path):
    manifests = []
    for name in ("one", "two"):
        manifests.append(write_tables(tmp_path / name, list(imagery.read(GEOTIFF, Params())), {}))
    assert manifests[0] == manifests[1]
    assert manifests[0]["tables"]["rasters"]["rows"] == 5


def test_internal_mask_band_is_honoured_like_a_masked_read(tmp_path):
    data = np.random.default_rng(3).integers(0, 200, (8, 10)).astype(np.uint8)
    mask = np.full((8, 10), 255, dtype=np.uint8)
    mask[:2, :] = 0
    path = tmp_path / "masked.tif"
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=True):
        with rasterio.open(path, "w", driver="GTiff", width=10, height=8, count=1, dtype="uint8",
                           crs="EPSG:32618", transform=from_origin(5e5, 4.5e6, 100, 100)) as out:
            out.write(data, 1)
            out.write_mask(mask)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["masked.tif"]
    stats = tables(tmp_path)["band_stats"].frame.iloc[0]
    with rasterio.open(path) as dataset:
        masked = dataset.read(1, masked=True)
    assert stats[["valid_px", "masked_px"]].tolist() == [60, 20] == [masked.count(), 20]
    assert stats["mean"] == pytest.approx(data[2:].mean(), rel=1e-12)
