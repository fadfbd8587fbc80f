"""The imagery join: per-entity statistics from the ingested inventory, checked against each file's SHA-256."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rasterio
from rasterio.transform import from_origin
from rasterio.warp import transform as transform_points

from stages.domains.imagery_join import StaleImageryError, entity_imagery, square_footprints
from stages.ingest import ingest
from stages.repository import read_manifest, read_table, validate_table, write_tables

CRS = "EPSG:5070"
X0, Y0 = 500_000.0, 2_000_000.0  # top-left corner; tiles A = [X0, X0 + 4 km], B = [X0 + 4 km, X0 + 8 km]
CLOUD = -9999.0


def lonlat(x: float, y: float) -> tuple[float, float]:
    (lon,), (lat,) = transform_points(CRS, "EPSG:4326", [x], [y])
    return lon, lat


def write_tile(path: Path, column: int, value: float, unit: str) -> None:
    """A 4 x 4 tile of 1 km pixels holding one value, the `column`-th tile from the left."""
    path.parent.mkdir(parents=True, exist_ok=True)
    profile = {"driver": "GTiff", "width": 4, "height": 4, "count": 1, "dtype": "float32", "crs": CRS,
               "transform": from_origin(X0 + 4000 * column, Y0, 1000, 1000), "nodata": CLOUD}
    with rasterio.Env(GDAL_PAM_ENABLED="NO"), rasterio.open(path, "w", **profile) as dataset:
        dataset.write(np.full((1, 4, 4), value, dtype=np.float32))
        dataset.set_band_unit(1, unit)


def write_layers(raw: Path) -> None:
    """relief 100 | 300 m; NDVI 0.2 everywhere on 15 Jan; NDVI 0.6 | cloud on 15 Jul."""
    for column, tile in enumerate(("r00c00", "r00c01")):
        write_tile(raw / f"{tile}_relief.tif", column, (100.0, 300.0)[column], "m")
        write_tile(raw / f"{tile}_ndvi_20200115.tif", column, 0.2, "1")
        write_tile(raw / f"{tile}_ndvi_20200715.tif", column, (0.6, CLOUD)[column], "1")


@pytest.fixture
def source(tmp_path) -> tuple[Path, Path]:
    write_layers(tmp_path / "raw")
    ingest("imagery", tmp_path / "raw", {}, tmp_path / "sources" / "imagery")
    return tmp_path / "raw", tmp_path / "sources" / "imagery"


def inputs_of(folder: Path) -> dict:
    return {name: read_table(folder, name) for name in read_manifest(folder)["tables"]}


def counties() -> pd.DataFrame:
    edge, inside = lonlat(X0 + 4000, Y0 - 2000), lonlat(X0 + 6000, Y0 - 2000)
    return pd.DataFrame({"crop": ["maize", "maize", "soy", "soy"], "loc_id": ["1", "2", "1", "2"],
                         "lon_deg": [edge[0], inside[0], -120.0, None],
                         "lat_deg": [edge[1], inside[1], 47.0, None]})


def test_statistics_tables_and_summary_columns_over_known_constant_fields(source):
    _, folder = source
    entities = counties()
    footprints = square_footprints(entities["lon_deg"], entities["lat_deg"], 2000.0)
    joined = entity_imagery(inputs_of(folder), entities, ["crop", "loc_id"], footprints, prefix="county_")
    tables = {t.name: t for t in joined.tables}
    assert sorted(tables) == ["county_image_static", "county_image_stats"]
    static = tables["county_image_static"].frame.set_index(["crop", "loc_id"])
    assert tables["county_image_static"].keys == ("crop", "loc_id", "variable")
    edge = static.loc[("maize", "1")]  # 2 x 2 pixels, two in each tile
    assert edge[["band_unit", "pixel_count", "valid_count", "valid_fraction", "mean", "min", "max", "std"]].tolist() \
        == ["m", 4, 4, 1.0, 200.0, 100.0, 300.0, 100.0]
    dated = tables["county_image_stats"].frame.set_index(["crop", "loc_id", "date"])
    july = dated.loc[("maize", "1", dt.date(2020, 7, 15))]
    assert july[["pixel_count", "valid_count", "valid_fraction", "mean"]].tolist() == [4, 2, 0.5, pytest.approx(0.6)]
    clouded = dated.loc[("maize", "2", dt.date(2020, 7, 15))]
    assert clouded[["pixel_count", "valid_count", "valid_fraction"]].tolist() == [4, 0, 0.0]
    assert pd.isna(clouded["mean"])
    for loc in ("1", "2"):  # outside the mosaic, or no coordinates: no pixel, fraction and statistics null
        row = dated.loc[("soy", loc, dt.date(2020, 1, 15))]
        assert row["pixel_count"] == 0 and row[["valid_fraction", "mean", "std"]].isna().all()
    summary = joined.summary.set_index(["crop", "loc_id"])
    assert list(summary.columns) == ["relief_mean_m", "relief_std_m", "ndvi_mean", "ndvi_min", "ndvi_max"]
    assert joined.summary_units == {"relief_mean_m": "m", "relief_std_m": "m", "ndvi_mean": "1",
                                    "ndvi_min": "1", "ndvi_max": "1"}
    np.testing.assert_allclose(summary.loc[("maize", "1")], [200, 100, 0.4, 0.2, 0.6], rtol=1e-6)
    np.testing.assert_allclose(summary.loc[("maize", "2")], [300, 0, 0.2, 0.2, 0.2], rtol=1e-6)  # cloud skipped
    assert summary.loc[[("soy", "1"), ("soy", "2")]].isna().all().all()
    for table in joined.tables:
        validate_table(table)
    assert tables["county_image_stats"].units["mean"] == "band_unit"


def test_a_changed_raster_is_refused_naming_the_file(source):
    raw, folder = source
    write_tile(raw / "r00c01_relief.tif", 1, 301.0, "m")  # a re-generated tile after the ingest
    entities = counties()
    with pytest.raises(StaleImageryError, match="differs from the imagery inventory") as caught:
        entity_imagery(inputs_of(folder), entities, ["crop", "loc_id"], [None] * 4)
    assert caught.value.path == str(raw / "r00c01_relief.tif")
    assert str(caught.value).startswith(f"{raw / 'r00c01_relief.tif'}: SHA-256 ")


def test_a_missing_raster_or_an_inventory_without_files_is_refused(source):
    raw, folder = source
    inputs = inputs_of(folder)
    del inputs["files"]
    with pytest.raises(StaleImageryError, match="no `files` inventory table"):
        entity_imagery(inputs, counties(), ["crop", "loc_id"], [None] * 4)
    (raw / "r00c00_ndvi_20200115.tif").unlink()
    with pytest.raises(StaleImageryError, match="listed in the imagery inventory but missing") as caught:
        entity_imagery(inputs_of(folder), counties(), ["crop", "loc_id"], [None] * 4)
    assert caught.value.path == str(raw / "r00c00_ndvi_20200115.tif")


def test_the_tables_are_byte_deterministic(source, tmp_path):
    _, folder = source
    entities = counties()
    footprints = square_footprints(entities["lon_deg"], entities["lat_deg"], 2000.0)
    manifests = [write_tables(tmp_path / name, entity_imagery(inputs_of(folder), entities, ["crop", "loc_id"],
                                                              footprints).tables, {})
                 for name in ("one", "two")]
    assert manifests[0] == manifests[1]
    assert manifests[0]["tables"]["image_stats"]["rows"] == 4 * 2
