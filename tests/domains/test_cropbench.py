"""cropbench aligner: CY-Bench regions as entities, time series with interpolated remote sensing, yields."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scibench_testing.domains import TINY_IMAGERY, align_domain, align_with_imagery, synthesize_and_ingest
from scibench_testing.realdata import REALDATA, realdata, requires_realdata

from stages.domains import cropbench
from stages.ingest import ingest
from stages.provenance import write_synthetic_record
from stages.repository import SourceTables, read_table, write_tables
from stages.sources import crops, imagery
from stages.sources.imagery.mosaic import Square
from stages.synthesize import crops as synthetic

CYBENCH = REALDATA / "cybench"
needs_real = requires_realdata("cybench")
NAMES = ["entities", "timeseries", "yields", "county_yield", "county_weather", "county_soil",
         "county_progress", "counties"]


def aligned(raw: Path, work: Path) -> dict[str, pd.DataFrame]:
    """Ingest `raw` and align it exactly as `stages.ingest` / `stages.align` do, then read it back."""
    write_tables(work / "source", list(crops.read(raw, crops.Params())),
                 {"kind": "source", "citation": crops.CITATION, "license": crops.LICENSE})
    inputs = {"crops": SourceTables(work / "source")}
    tables = cropbench.align(inputs)
    assert [t.name for t in tables] == NAMES
    manifest = write_tables(work / "repository", tables, {"domain": "cropbench"})  # validates every table
    assert manifest["tables"]["timeseries"]["columns"]["ndvi_interp"]["unit"] == "1"
    return {name: read_table(work / "repository", name) for name in NAMES}


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> dict[str, pd.DataFrame]:
    return aligned(realdata("cybench"), tmp_path_factory.mktemp("real"))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, pd.DataFrame]:
    raw = tmp_path_factory.mktemp("raw")
    synthetic.write(raw, synthetic.Params(n_counties=12, first_year=2014, last_year=2018))
    return aligned(raw, tmp_path_factory.mktemp("tiny"))


def test_entity_key_is_the_region_id():
    assert cropbench.ENTITY_KEY == "adm_id"


@needs_real
def test_real_entities_are_per_crop_and_region(real):
    entities = real["entities"]
    assert len(entities) == 24 and entities[["crop", "adm_id"]].drop_duplicates().shape[0] == 24
    nl11 = entities.set_index(["crop", "adm_id"]).loc[[("maize", "NL11"), ("wheat", "NL11")]]
    assert nl11["awc_cm_m"].tolist() == [24.761455535888672, 20.64035415649414]  # crop-masked soil
    assert nl11["sos_doy"].tolist() == [101.5834503173828, 44.70225143432617]
    assert nl11["drainage_class"].tolist() == [1, 4]


@needs_real
def test_real_timeseries_is_the_union_of_dates_with_interpolated_remote_sensing(real):
    series = real["timeseries"].set_index(["crop", "adm_id", "date"])
    maize = series.loc[("maize", "NL11")]
    assert maize.loc[dt.date(2001, 1, 1), "tmin_c"] == -0.585  # meteo day
    assert maize.loc[dt.date(2001, 1, 1), "fpar_pct"] == maize.loc[dt.date(2001, 1, 1), "fpar_interp_pct"]
    day2 = maize.loc[dt.date(2001, 1, 2)]
    assert np.isnan(day2["fpar_pct"]) and not np.isnan(day2["fpar_interp_pct"])
    first, next_ = maize.loc[dt.date(2001, 1, 1), "fpar_pct"], maize.loc[dt.date(2001, 1, 11), "fpar_pct"]
    assert day2["fpar_interp_pct"] == pytest.approx(first + (next_ - first) / 10)
    fill = maize.loc[dt.date(2018, 8, 5)]  # NDVI 0.0 fill: null as observed, interpolated from neighbours
    assert np.isnan(fill["ndvi"]) and 0 < fill["ndvi_interp"] < 1
    assert series["tmin_c"].notna().sum() == 48 and series["ssm_kg_m2"].isna().all()
    assert len(series) == series.index.drop_duplicates().size


@needs_real
def test_real_yields_keep_units_and_raw_crop_names(real):
    yields = real["yields"]
    assert len(yields) == 371
    assert yields.groupby("crop")["crop_name_raw"].first().to_dict() == {"maize": "maize",
                                                                        "wheat": "winter_wheat"}
    assert len(real["county_yield"]) == 0 and list(real["counties"].columns[:2]) == ["crop", "loc_id"]


def test_interpolation_is_linear_within_a_group_and_never_bridges_long_gaps():
    group = np.array([0, 0, 0, 0, 0, 1, 1, 1])
    days = np.array([0, 5, 10, 30, 80, 0, 3, 6], dtype=float)
    values = np.array([1.0, np.nan, 3.0, np.nan, 7.0, np.nan, 2.0, np.nan])
    result = cropbench.interpolate(group, days, values, max_gap=40)
    np.testing.assert_array_equal(np.isnan(result), [False, False, False, True, False, True, False, True])
    assert result[[0, 1, 2, 4, 6]].tolist() == [1.0, 2.0, 3.0, 7.0, 2.0]


def test_synthetic_repository_joins_daily_weather_with_remote_sensing(tiny):
    series, entities = tiny["timeseries"], tiny["entities"]
    assert len(series) == 12 * 1826 and len(entities) == 12
    assert entities["adm_id"].is_monotonic_increasing and entities["sos_doy"].notna().all()
    summer = pd.to_datetime(series["date"].astype(str)).dt.month.between(6, 8)
    assert series.loc[summer, "fpar_interp_pct"].notna().all()
    assert series.loc[summer, "ndvi_interp"].notna().mean() > 0.99
    assert series["fpar_pct"].notna().sum() == 12 * 5 * 36
    peak = series.loc[summer].groupby("adm_id")["ndvi_interp"].mean()
    winter = series.loc[~summer].groupby("adm_id")["ndvi_interp"].mean()
    assert (peak > winter + 0.2).all()


def test_synthetic_yields_and_khaki_tables_pass_through(tiny):
    assert len(tiny["yields"]) == len(tiny["county_yield"])
    assert tiny["yields"].columns.tolist() == ["crop", "adm_id", "harvest_year", "country_code", "crop_name_raw",
                                                "yield_t_ha", "harvest_area_ha", "production_t"]
    assert len(tiny["county_weather"]) == 52 * len(tiny["county_yield"])
    assert len(tiny["counties"]) == 12 and len(tiny["county_soil"]) == 72


def test_khaki_counties_get_imagery_of_a_county_sized_square(tmp_path):
    counties_12 = synthetic.Params(n_counties=12, first_year=2017, last_year=2018)
    image_raw, tables = align_with_imagery("cropbench", "crops", counties_12, tmp_path)
    assert {"county_image_stats", "county_image_static"} <= set(tables)
    counties = tables["counties"]
    summary = ["relief_mean_m", "relief_std_m", "ndvi_mean", "ndvi_min", "ndvi_max"]
    assert counties.columns.tolist()[-5:] == summary and counties[summary].notna().all().all()
    assert tables["county_image_stats"].columns.tolist()[:4] == ["crop", "loc_id", "variable", "date"]
    assert len(tables["county_image_stats"]) == 12 * 4 and len(tables["county_image_static"]) == 12
    first = counties.iloc[0]
    direct = imagery.entity_image_stats(image_raw, {"c": Square(first["lon_deg"], first["lat_deg"],
                                                                cropbench.COUNTY_SIDE_M)})
    assert first["relief_mean_m"] == direct.loc[direct["variable"] == "relief", "mean"].iloc[0]
    assert "relief_mean_m" not in tables["entities"]  # CY-Bench regions have no coordinates


def test_us_state_comes_from_the_fips_code_of_the_region_id():
    ids = pd.Series(["US-17-003", "US-46-101", "NL11", "US-99-001"])
    assert cropbench.us_state(ids).tolist() == ["illinois", "south dakota", pd.NA, pd.NA]


def test_synthetic_entities_carry_their_state(tiny):
    entities = tiny["entities"]
    assert entities.columns.tolist()[:4] == ["crop", "adm_id", "country_code", "state"]
    assert entities["state"].notna().all()


SOYBEAN_LOOKUP = b"State,County,ID_loc\r\nillinois,adams,0\r\nillinois,alexander,1\r\niowa,adair,2\r\n"
JOIN_NOTE = ("3 of 15 counties have no coordinates (lat_deg or lon_deg null) and are left out of the imagery"
             " join (no county_image_stats or county_image_static rows, null image summary columns): soybean 3")


def test_counties_without_coordinates_are_left_out_of_the_imagery_join_with_the_reason(tmp_path):
    params = synthetic.Params(n_counties=12, first_year=2017, last_year=2018)
    raw = tmp_path / "raw" / "crops"
    synthetic.write(raw, params)
    (raw / "khaki" / "Soybeans_Loc_ID.csv").write_bytes(SOYBEAN_LOOKUP)  # the published layout: no lat,long
    write_synthetic_record(raw, "crops", params)
    ingest("crops", raw, {}, tmp_path / "sources" / "crops")
    synthesize_and_ingest("imagery", TINY_IMAGERY, tmp_path)
    tables = align_domain("cropbench", ["crops", "imagery"], tmp_path)
    notes = {name: entry.get("notes") for name, entry in tables["_manifest"]["tables"].items()}
    source_note = ("lat_deg and lon_deg are null for the 3 soybean counties of Soybeans_Loc_ID.csv: its header"
                   " State,County,ID_loc has no lat,long columns")
    assert notes["counties"] == [source_note, JOIN_NOTE]
    assert notes["county_image_stats"] == notes["county_image_static"] == [JOIN_NOTE]
    assert notes["county_yield"] is None and notes["entities"] is None
    counties = tables["counties"].set_index(["crop", "loc_id"])
    assert counties.loc["soybean", ["lat_deg", "relief_mean_m", "ndvi_max"]].isna().all().all()
    assert counties.loc["maize", ["lat_deg", "relief_mean_m", "ndvi_max"]].notna().all().all()
    for name, per_county in (("county_image_stats", 4), ("county_image_static", 1)):
        assert tables[name]["crop"].tolist() == ["maize"] * 12 * per_county
