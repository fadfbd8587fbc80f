"""The gridcells aligner: cells of the gridded simulation, their daily series and their imagery."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scibench_testing.domains import align_domain, align_with_imagery
from scibench_testing.files import folder_bytes

from stages.domains import gridcells
from stages.repository import read_table
from stages.sources import imagery
from stages.sources.imagery.mosaic import LonLatBox
from stages.synthesize import hdf
from stages.synthesize.hdf.bucket import LAT_RANGE, LON_RANGE

TINY = hdf.Params(n_lat=8, n_lon=8, n_days=30, n_features=200, n_barcodes=50)
VARIABLES = {"aet_mm_d": "mm d-1", "pet_mm_d": "mm d-1", "precip_mm_d": "mm d-1", "runoff_mm_d": "mm d-1",
             "soil_water_mm": "mm", "swe_mm": "mm", "tair_c": "degC"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("gridcells")
    return root, *align_with_imagery("gridcells", "hdf", TINY, root)


def test_entities_are_the_simulated_cells_with_bounds_and_spherical_area(built):
    root, _, tables = built
    cells = read_table(root / "sources" / "hdf", "cells")
    every = gridcells.cell_bounds(cells["file"].iloc[0], cells)
    assert len(every) == 64 and every["cell_id"].is_monotonic_increasing
    assert (every["lat_south_deg"].min(), every["lat_north_deg"].max()) == pytest.approx(LAT_RANGE)
    assert (every["lon_west_deg"].min(), every["lon_east_deg"].max()) == pytest.approx(LON_RANGE)
    box_km2 = gridcells.EARTH_RADIUS_KM**2 * math.radians(LON_RANGE[1] - LON_RANGE[0]) * (
        math.sin(math.radians(LAT_RANGE[1])) - math.sin(math.radians(LAT_RANGE[0])))
    assert every["cell_area_km2"].sum() == pytest.approx(box_km2, rel=1e-12)
    first = every.iloc[0]
    assert (first["lat_south_deg"], first["lat_north_deg"]) == pytest.approx((25.0, 28.125))
    entities = tables["entities"]
    grid = read_table(root / "sources" / "hdf", "grid")
    simulated = sorted(grid.loc[grid["value"].notna(), "cell_id"].unique())
    assert entities["cell_id"].tolist() == simulated and 0 < len(simulated) < 64


def test_timeseries_has_one_column_per_variable_named_with_its_unit(built):
    root, _, tables = built
    series = tables["timeseries"]
    assert list(series.columns) == ["cell_id", "date", *VARIABLES]
    assert {c: e["unit"] for c, e in tables["_manifest"]["tables"]["timeseries"]["columns"].items()
            if c in VARIABLES} == VARIABLES
    assert len(series) == len(tables["entities"]) * 30
    grid = read_table(root / "sources" / "hdf", "grid")
    cell = tables["entities"]["cell_id"].iloc[3]
    precip = grid[(grid["variable"] == "precip") & (grid["cell_id"] == cell)]["value"].to_numpy()
    np.testing.assert_array_equal(series.loc[series["cell_id"] == cell, "precip_mm_d"].to_numpy(), precip)
    assert str(series["date"].iloc[0]) == "2000-01-01"


def test_each_cell_gets_the_imagery_of_its_lonlat_box(built):
    _, image_raw, tables = built
    entities = tables["entities"].set_index("cell_id")
    cell = entities.iloc[len(entities) // 2]
    box = LonLatBox(cell["lon_west_deg"], cell["lat_south_deg"], cell["lon_east_deg"], cell["lat_north_deg"])
    direct = imagery.entity_image_stats(image_raw, {"c": box})
    assert cell["relief_mean_m"] == direct.loc[direct["variable"] == "relief", "mean"].iloc[0]
    static = tables["image_static"]
    assert (static["pixel_count"] > 500).all()  # a 7.25 x 3.125 degree cell holds ~1,000 pixels of 16 km
    assert len(tables["image_stats"]) == 4 * len(entities)
    assert tables["_manifest"]["tables"]["entities"]["columns"]["cell_area_km2"]["unit"] == "km2"


def test_aligning_twice_gives_byte_identical_files(built):
    root, _, _ = built
    align_domain("gridcells", ["hdf", "imagery"], root, name="again")
    assert folder_bytes(root / "repositories" / "again") == folder_bytes(root / "repositories" / "gridcells")


def test_curvilinear_grids_and_several_grid_files_are_refused():
    cells = pd.DataFrame({"file": "a.nc", "cell_id": ["c0", "c1", "c2", "c3"], "row": [0, 0, 1, 1],
                          "col": [0, 1, 0, 1], "lat_deg": [10.0, 10.5, 11.0, 11.0], "lon_deg": [0.0, 1.0, 0.0, 1.0]})
    with pytest.raises(ValueError, match="a.nc: lat_deg varies within a row: gridcells needs a rectilinear grid"):
        gridcells.cell_bounds("a.nc", cells)
    two = {"hdf": {"cells": pd.concat([cells, cells.assign(file="b.nc")]), "grid": pd.DataFrame()}}
    with pytest.raises(ValueError, match=r"one gridded file; the hdf source holds 2: \['a.nc', 'b.nc'\]"):
        gridcells.align(two)
