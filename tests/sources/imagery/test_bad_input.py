"""GeoTIFF reader on bad input: missing or impossible georeference, broken files, nodata, names."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rasterio
from pydantic import ValidationError
from rasterio.control import GroundControlPoint
from rasterio.transform import from_origin
from scibench_testing.imagery import GEOTIFF, needs_real, tables, write_raster

from stages.repository import validate_table, write_tables
from stages.sources import imagery
from stages.sources.imagery import Params, RawFormatError


def error_of(path: Path) -> RawFormatError:
    with pytest.raises(RawFormatError) as caught:
        imagery.read_tiff(path)
    assert caught.value.path == str(path)
    return caught.value


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
        {"file": str(tmp_path / "bad.tif"), "line": -1, "column": None, "count": None,
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


# --- found by tests/fuzz/test_imagery.py ------------------------------------------------------------


def with_entry_type(path: Path, tag: int, kind: int) -> Path:
    """The file with the TIFF type of `tag` in its first (little-endian, classic) directory changed."""
    data = bytearray(path.read_bytes())
    directory = int.from_bytes(data[4:8], "little")
    for entry in range(int.from_bytes(data[directory:directory + 2], "little")):
        at = directory + 2 + 12 * entry
        if int.from_bytes(data[at:at + 2], "little") == tag:
            data[at + 2:at + 4] = kind.to_bytes(2, "little")
            path.write_bytes(bytes(data))
            return path
    raise AssertionError(f"no tag {tag} in {path}")


def test_gdal_nodata_tag_of_another_type_than_ascii(tmp_path):
    path = with_entry_type(write_raster(tmp_path / "a.tif", np.full((8, 10), 7, np.uint8), nodata=111), 42113, 1)
    assert error_of(path).problem == "GDAL_NODATA tag is not of the ASCII type"


def test_strip_offsets_that_are_not_integers(tmp_path):
    path = with_entry_type(write_raster(tmp_path / "a.tif", ONES), 273, 2)  # StripOffsets as ASCII
    assert error_of(path).problem == "image directory 0: block offsets and sizes must be non-negative integers"


@needs_real
def test_crs_text_that_is_not_utf8(tmp_path):
    data = (GEOTIFF / "float_raster_with_nodata.tif").read_bytes()  # a user-defined CRS, told by its citation
    assert data.count(b"Unknown_based_on_GRS80") == 1
    path = tmp_path / "laea.tif"
    path.write_bytes(data.replace(b"Unknown_based_on_GRS80", b"Unknown\xd5based_on_GRS80"))
    assert error_of(path).problem.startswith("GDAL cannot open the TIFF ('utf-8' codec can't decode byte 0xd5")


def test_bigtiff_directory_offset_beyond_what_can_be_sought(tmp_path):
    path = tmp_path / "big.tif"
    path.write_bytes(b"II+\x00\x08\x00\x00\x00" + (2**63 + 5).to_bytes(8, "little"))
    assert error_of(path).problem == ("file is truncated: image directory at byte 9223372036854775813 is past the"
                                      " end of the file (16 bytes)")
