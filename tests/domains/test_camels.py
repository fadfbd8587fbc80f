"""The camels aligner: basins with forcing and streamflow, and with the imagery mosaic when it is a source."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scibench_testing.domains import align_domain, align_with_imagery
from scibench_testing.files import folder_bytes

from stages.domains import camels
from stages.sources import imagery
from stages.sources.imagery.mosaic import Square
from stages.synthesize import camels_us

TINY = camels_us.Params(n_basins=5, first_year=2001, last_year=2001)
SUMMARY = ["relief_mean_m", "relief_std_m", "ndvi_mean", "ndvi_min", "ndvi_max"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("camels")
    return root, *align_with_imagery("camels", "camels_us", TINY, root)


def test_without_imagery_the_repository_is_attributes_and_the_daily_join(built):
    root, _, _ = built
    tables = align_domain("camels", ["camels_us"], root, name="plain")
    assert sorted(tables) == ["_manifest", "entities", "timeseries"]
    assert len(tables["entities"]) == 5 and len(tables["timeseries"]) == 5 * 365
    assert not set(SUMMARY) & set(tables["entities"].columns)


def test_imagery_adds_image_tables_and_summary_columns(built):
    root, _, tables = built
    plain = align_domain("camels", ["camels_us"], root, name="plain")["entities"]
    entities = tables["entities"]
    assert list(entities.columns) == [*plain.columns, *SUMMARY]
    pd.testing.assert_frame_equal(entities[plain.columns], plain)
    assert entities[SUMMARY].notna().all().all()  # every synthetic basin lies in the CONUS mosaic
    stats, static = tables["image_stats"], tables["image_static"]
    assert len(stats) == 5 * 4 and len(static) == 5
    assert stats.groupby("gauge_id")["date"].nunique().eq(4).all()
    relief = static.set_index("gauge_id")["mean"]
    assert entities.set_index("gauge_id")["relief_mean_m"].equals(relief.rename("relief_mean_m"))
    ndvi_max = stats.groupby("gauge_id")["mean"].max()
    np.testing.assert_allclose(entities.set_index("gauge_id")["ndvi_max"], ndvi_max.loc[entities["gauge_id"]])
    columns = tables["_manifest"]["tables"]["entities"]["columns"]
    assert (columns["relief_mean_m"]["unit"], columns["ndvi_max"]["unit"]) == ("m", "1")
    assert tables["_manifest"]["tables"]["image_stats"]["keys"] == ["gauge_id", "variable", "date"]
    assert set(tables["_manifest"]["sources"]) == {"camels_us", "imagery"}


def test_a_basin_reads_a_square_of_its_area_around_the_gauge(built):
    _, image_raw, tables = built
    basin = tables["entities"].iloc[0]
    side_m = math.sqrt(basin["area_gages2_km2"]) * 1000
    direct = imagery.entity_image_stats(image_raw, {"b": Square(basin["gauge_lon_deg"], basin["gauge_lat_deg"],
                                                                side_m)})
    relief = direct[direct["variable"] == "relief"].iloc[0]
    assert basin["relief_mean_m"] == relief["mean"] and basin["relief_std_m"] == relief["std"]
    own = tables["image_static"].iloc[0]
    assert own["pixel_count"] == relief["pixel_count"] >= 1


def test_aligning_twice_gives_byte_identical_files(built):
    root, _, _ = built
    align_domain("camels", ["camels_us", "imagery"], root, name="again")
    assert folder_bytes(root / "repositories" / "again") == folder_bytes(root / "repositories" / "camels")


def test_entity_key_is_the_gauge_id():
    assert camels.ENTITY_KEY == "gauge_id"
