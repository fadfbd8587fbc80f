"""Crops reader: every real CY-Bench sample file, then malformed CY-Bench and Khaki inputs."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from scibench_testing.realdata import REALDATA, requires_realdata

from stages.repository import validate_table, write_tables
from stages.sources import crops
from stages.sources.crops import Params
from stages.sources.crops.khaki import BUSHEL_T_HA, read_khaki_locations, read_khaki_samples
from stages.tables import RawFormatError

CYBENCH = REALDATA / "cybench"
needs_real = requires_realdata("cybench")
ROWS = {  # data rows of every real file (FORMATS.md section 2.2)
    ("maize", "yield"): 129, ("maize", "meteo"): 48, ("maize", "fpar"): 9744, ("maize", "ndvi"): 11757,
    ("maize", "soil"): 12, ("maize", "crop_calendar"): 12, ("wheat", "yield"): 242,
    ("wheat", "fpar"): 9744, ("wheat", "ndvi"): 11728, ("wheat", "soil"): 12, ("wheat", "crop_calendar"): 12,
}
TABLES = ["yield", "meteo", "fpar", "ndvi", "soil", "soil_moisture", "crop_calendar", "county_yield",
          "county_weather", "county_soil", "county_progress", "counties", "fill_values", "quarantine"]


def tables(root: Path, **params) -> dict[str, pd.DataFrame]:
    return {t.name: t.frame for t in crops.read(root, Params(**params))}


# --- real files -----------------------------------------------------------------------------------


@needs_real
@pytest.mark.parametrize(("crop", "source"), sorted(ROWS))
def test_every_real_file_reads_completely(crop, source):
    frame = crops.read_cybench(CYBENCH, crop, "NL", source)
    assert len(frame) == ROWS[crop, source]
    assert (frame["crop"] == crop).all() and (frame["country_code"] == "NL").all()
    assert frame["adm_id"].nunique() == 12 and frame["adm_id"].str.fullmatch(r"NL\d\d").all()
    keys = [c for c in ("crop", "adm_id", "date", "harvest_year") if c in frame]
    assert frame.equals(frame.sort_values(keys, ignore_index=True))
    assert not frame.duplicated(keys).any()


@needs_real
def test_real_values_and_units_are_exact():
    yields = crops.read_cybench(CYBENCH, "maize", "NL", "yield").set_index(["adm_id", "harvest_year"])
    assert yields.loc[("NL11", 2008), ["yield_t_ha", "harvest_area_ha", "production_t"]].tolist() == [
        11.6, 806.0, 9333.0]
    meteo = crops.read_cybench(CYBENCH, "maize", "NL", "meteo")
    first = meteo.iloc[0]
    assert first[["adm_id", "date"]].tolist() == ["NL11", dt.date(2001, 1, 1)]
    assert first.iloc[5:].tolist() == [-0.585, 4.631, 2.462, 8.818, 492611.625, 0.346, 1.921, 8.472]
    assert list(meteo.columns[5:]) == ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "rad_j_m2_d", "et0_mm_d",
                                       "vpd_hpa", "cwb_mm_d"]
    assert str(meteo["date"].dtype) == "date32[day][pyarrow]"
    fpar = crops.read_cybench(CYBENCH, "maize", "NL", "fpar")
    assert fpar.loc[0, "fpar_pct"] == 44.07267750954988
    ndvi = crops.read_cybench(CYBENCH, "maize", "NL", "ndvi").set_index(["adm_id", "date"])
    assert ndvi.loc[("NL13", dt.date(2020, 9, 29)), "ndvi"] == pytest.approx((181.0 - 50) / 200)
    assert ndvi["ndvi"].between(0, 1).sum() == 11757 - 12
    soil = crops.read_cybench(CYBENCH, "wheat", "NL", "soil").set_index("adm_id")
    assert soil.loc["NL11", ["awc_cm_m", "bulk_density_kg_dm3"]].tolist() == [20.64035415649414,
                                                                             1.2717734575271606]
    assert soil["drainage_class"].dtype == "Int64" and soil.loc["NL11", "drainage_class"] == 4
    calendar = crops.read_cybench(CYBENCH, "maize", "NL", "crop_calendar").set_index("adm_id")
    assert calendar.loc["NL11", ["sos_doy", "eos_doy"]].tolist() == [101.5834503173828, 300.0]


@needs_real
def test_wheat_yield_crop_name_is_normalised_and_the_raw_spelling_kept():
    frame = crops.read_cybench(CYBENCH, "wheat", "NL", "yield")
    assert set(frame["crop"]) == {"wheat"} and set(frame["crop_name_raw"]) == {"winter_wheat"}
    assert frame.groupby("harvest_year").size()[2016] == 3  # only 3 regions in 2016


@needs_real
def test_real_ndvi_is_unsorted_on_disk_and_fill_values_become_counted_nulls():
    dates = [line.split(",")[2] for line in (CYBENCH / "maize/NL/ndvi_maize_NL.csv").read_text().splitlines()[1:]]
    assert dates != sorted(dates)
    read = tables(CYBENCH)
    nulls = read["ndvi"].groupby("crop")["ndvi"].apply(lambda s: int(s.isna().sum()))
    assert nulls.to_dict() == {"maize": 12, "wheat": 14}
    assert read["fill_values"].to_dict("records") == [
        {"file": "maize/NL/ndvi_maize_NL.csv", "column": "ndvi", "value": "0.0", "rows": 12, "first_line": 2915},
        {"file": "wheat/NL/ndvi_wheat_NL.csv", "column": "ndvi", "value": "0.0", "rows": 12, "first_line": 6707},
        {"file": "wheat/NL/ndvi_wheat_NL.csv", "column": "ndvi", "value": "44.6412037037037", "rows": 1,
         "first_line": 11338},
        {"file": "wheat/NL/ndvi_wheat_NL.csv", "column": "ndvi", "value": "49.49430065710071", "rows": 1,
         "first_line": 9369},
    ]
    with pytest.raises(RawFormatError) as caught:
        list(crops.read(CYBENCH, Params(fill_values="error")))
    assert (caught.value.line, caught.value.problem) == (
        2915, "fill value 0 in column ndvi (values below 50 mark invalid pixels)")


@needs_real
def test_read_yields_every_table_valid_sorted_and_with_units():
    read = list(crops.read(CYBENCH, Params()))
    assert [t.name for t in read] == TABLES
    for table in read:
        validate_table(table)
    by_name = {t.name: t.frame for t in read}
    assert {name: len(by_name[name]) for name in ("yield", "meteo", "fpar", "ndvi", "soil", "crop_calendar")} == {
        "yield": 371, "meteo": 48, "fpar": 19488, "ndvi": 23485, "soil": 24, "crop_calendar": 24}
    assert len(by_name["quarantine"]) == 0 and len(by_name["county_yield"]) == 0


@needs_real
def test_crlf_line_endings_read_identically(tmp_path):
    for source in CYBENCH.rglob("*.csv"):
        target = tmp_path / source.relative_to(CYBENCH)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes().replace(b"\n", b"\r\n"))
    crlf, lf = tables(tmp_path), tables(CYBENCH)
    for name in TABLES:
        pd.testing.assert_frame_equal(crlf[name], lf[name])


# --- malformed CY-Bench inputs ---------------------------------------------------------------------

FPAR = ["crop_name,adm_id,date,fpar", "maize,NL11,20010101,44.5", "maize,NL12,20010101,58.25",
        "maize,NL11,20010111,47.0"]
YIELD = ["crop_name,country_code,adm_id,harvest_year,yield,harvest_area,production",
         "maize,NL,NL11,2008,11.6,806.0,9333.0", "maize,NL,NL12,2008,12.1,500.0,6050.0"]
METEO = ["crop_name,adm_id,date,tmin,tmax,prec,rad,tavg,et0,vpd,cwb",
         "maize,NL11,20010101,-0.585,4.631,8.818,492611.625,2.462,0.346,1.921,8.472"]


def write(root: Path, relative: str, lines: list[str] | str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(lines if isinstance(lines, str) else "\n".join(lines) + "\n")
    return path


def error(tmp_path: Path, lines: list[str] | str, source: str = "fpar", **params) -> RawFormatError:
    shutil.rmtree(tmp_path / "maize", ignore_errors=True)
    path = write(tmp_path, f"maize/NL/{source}_maize_NL.csv", lines)
    with pytest.raises(RawFormatError) as caught:
        list(crops.read(tmp_path, Params(**params)))
    assert caught.value.path == str(path)
    return caught.value


def test_a_small_unsorted_file_is_read_and_sorted(tmp_path):
    write(tmp_path, "maize/NL/fpar_maize_NL.csv", [FPAR[0], FPAR[3], FPAR[2], FPAR[1]])
    frame = tables(tmp_path)["fpar"]
    assert frame[["adm_id", "date", "fpar_pct"]].values.tolist() == [
        ["NL11", dt.date(2001, 1, 1), 44.5], ["NL11", dt.date(2001, 1, 11), 47.0],
        ["NL12", dt.date(2001, 1, 1), 58.25]]


@pytest.mark.parametrize(("lines", "line", "problem"), [
    ("", 1, "file is empty"),
    (FPAR[:1], 2, "no data rows after the header"),
    ("\n".join(FPAR) + "\nmaize,NL12,2001", 5, "expected 4 fields, found 3"),
    ([FPAR[0], "maize,NL11,20010101,4x.5"], 2, "value '4x.5' in column fpar is not a number"),
    ([FPAR[0], "maize,NL11,20010101,nan"], 2, "value 'nan' in column fpar is not a number"),
    ([FPAR[0], FPAR[1], FPAR[2], FPAR[1]], 4, "duplicated adm_id NL11 and date 20010101 (first at line 2)"),
    ([FPAR[0], FPAR[1], "", FPAR[1]], 4, "duplicated adm_id NL11 and date 20010101 (first at line 2)"),
    ([line.replace(",", ";") for line in FPAR], 1, "fields must be separated by ',', found ';'"),
    ([FPAR[0], "maize,NL11,2001-01-21,40.0"], 2,
     "date '2001-01-21' in column date is not a valid YYYYMMDD date"),
    ([FPAR[0], FPAR[1], "maize,NL11,20010230,40.0"], 3,
     "date '20010230' in column date is not a valid YYYYMMDD date"),
    ([FPAR[0], "wheat,NL11,20010101,40.0"], 2, "crop_name 'wheat' contradicts the crop 'maize' of the path"),
    ([FPAR[0], "maize,NL11,20010101,255"], 2,
     "value 255 in column fpar is outside the valid range [0, 100] (unexpected sentinel?)"),
    ([FPAR[0], "maize,,20010101,40.0"], 2, "empty value in column adm_id"),
    (FPAR[1:], 1, "missing header: line 1 is a data row ('maize,NL11,20010101,44.5')"),
    ([FPAR[0].replace("fpar", "fapar"), *FPAR[1:]], 1, "unknown column 'fapar' in the header"),
    (["crop_name,adm_id,date", "maize,NL11,20010101"], 1, "missing column(s) fpar in the header"),
    (["crop_name,adm_id,date,fpar,fpar", "maize,NL11,20010101,1,2"], 1,
     "duplicated column 'fpar' in the header"),
    ([FPAR[0], '",NL11,20010101,44.5', *FPAR[2:]], 2, "expected 4 fields, found 1"),  # found by fuzzing
])
def test_malformed_fpar_file(tmp_path, lines, line, problem):
    caught = error(tmp_path, lines)
    assert (caught.line, caught.problem) == (line, problem)


def test_yield_country_negative_yield_and_sentinels(tmp_path):
    caught = error(tmp_path, [YIELD[0], YIELD[1], YIELD[2].replace(",NL,", ",DE,")], "yield")
    assert (caught.line, caught.problem) == (3, "country_code 'DE' contradicts the country 'NL' of the path")
    caught = error(tmp_path, [YIELD[0], YIELD[1].replace("11.6", "-11.6")], "yield")
    assert (caught.line, caught.problem) == (2, "negative value -11.6 in column yield")
    caught = error(tmp_path, [YIELD[0], YIELD[1].replace("2008", "2008.0")], "yield")
    assert (caught.line, caught.problem) == (2, "value '2008.0' in column harvest_year is not an integer")
    caught = error(tmp_path, [METEO[0], METEO[1].replace("-0.585", "-9999")], "meteo")
    assert (caught.line, caught.problem) == (
        2, "value -9999 in column tmin is outside the valid range [-90, 65] (unexpected sentinel?)")
    caught = error(tmp_path, ["crop_name,adm_id,date,ndvi", "maize,NL11,20010101,251.0"], "ndvi")
    assert caught.problem == "value 251 in column ndvi is outside the valid range [0, 250] (unexpected sentinel?)"


def test_empty_value_cells_become_null_and_are_reported(tmp_path):
    write(tmp_path, "maize/NL/yield_maize_NL.csv", [YIELD[0], YIELD[1].replace(",806.0,", ",,"), YIELD[2]])
    read = tables(tmp_path)
    assert read["yield"]["harvest_area_ha"].isna().tolist() == [True, False]
    assert read["fill_values"].to_dict("records") == [
        {"file": "maize/NL/yield_maize_NL.csv", "column": "harvest_area", "value": "", "rows": 1, "first_line": 2}]
    caught = error(tmp_path, [YIELD[0], YIELD[1].replace(",806.0,", ",,")], "yield", fill_values="error")
    assert (caught.line, caught.problem) == (2, "empty value in column harvest_area")


def test_optional_columns_absent_become_null_columns(tmp_path):
    write(tmp_path, "maize/NL/meteo_maize_NL.csv", ["crop_name,adm_id,date,prec", "maize,NL11,20010101,1.5"])
    write(tmp_path, "maize/NL/yield_maize_NL.csv", ["crop_name,adm_id,harvest_year,yield", "maize,NL11,2008,9.5"])
    read = tables(tmp_path)
    assert read["meteo"]["prec_mm_d"].tolist() == [1.5] and read["meteo"]["tmin_c"].isna().all()
    assert read["yield"]["country_code"].tolist() == ["NL"] and read["yield"]["production_t"].isna().all()
    write(tmp_path, "maize/NL/soil_moisture_maize_NL.csv", ["crop_name,adm_id,date,ssm,rsm",
                                                            "maize,NL11,20030101,27.5,310.25"])
    assert tables(tmp_path)["soil_moisture"][["ssm_kg_m2", "rsm_kg_m2"]].values.tolist() == [[27.5, 310.25]]
    caught = error(tmp_path, ["crop_name,adm_id,date", "maize,NL11,20010101"], "meteo")
    assert caught.problem.startswith("no value column in the header")


def test_quarantine_keeps_the_other_files(tmp_path):
    write(tmp_path, "maize/NL/fpar_maize_NL.csv", FPAR)
    bad = write(tmp_path, "maize/NL/yield_maize_NL.csv", [YIELD[0], YIELD[1], YIELD[1]])
    stray = write(tmp_path, "maize/NL/notes.csv", "a,b\n1,2\n")
    with pytest.raises(RawFormatError, match="neither"):
        list(crops.read(tmp_path, Params()))
    read = tables(tmp_path, on_error="quarantine")
    assert read["quarantine"].to_dict("records") == [
        {"file": str(stray), "line": -1, "column": None, "count": None,
         "problem": "csv file fits neither <crop>/<CC>/<source>_<crop>_<CC>.csv (CY-Bench) nor khaki/<crop>_*.csv"},
        {"file": str(bad), "line": 3, "column": None, "count": None,
         "problem": "duplicated adm_id NL11 and harvest_year 2008 (first at line 2)"}]
    assert len(read["fpar"]) == 3 and len(read["yield"]) == 0


def test_a_region_in_two_country_files_is_rejected(tmp_path):
    soil = ["crop_name,adm_id,awc,bulk_density,drainage_class", "maize,NL11,20.5,1.2,3"]
    write(tmp_path, "maize/BE/soil_maize_BE.csv", soil)
    second = write(tmp_path, "maize/NL/soil_maize_NL.csv", soil)
    with pytest.raises(RawFormatError) as caught:
        list(crops.read(tmp_path, Params()))
    assert caught.value.path == str(second)
    assert caught.value.problem == f"adm_id NL11 of crop maize is also in {tmp_path / 'maize/BE/soil_maize_BE.csv'}"
    caught = error(tmp_path, [soil[0], soil[1].replace(",3", ",2.5")], "soil")
    assert caught.problem == "value 2.5 in column drainage_class is not a whole class"


def test_an_empty_folder_is_an_error(tmp_path):
    with pytest.raises(RawFormatError, match="no CY-Bench or Khaki csv files found"):
        list(crops.read(tmp_path, Params()))


def test_params_reject_unknown_keys():
    with pytest.raises(ValidationError):
        Params(on_error="ignore")
    with pytest.raises(ValidationError):
        Params(ndvi_scale=200)


# --- Khaki et al. (2020) wide layout ---------------------------------------------------------------

SOIL_VARS = ("bdod", "clay")
DEPTHS = ("0-5cm", "5-15cm", "15-30cm", "30-60cm", "60-100cm", "100-200cm")
KHAKI_HEADER = (["loc_ID", "year", "yield"] + [f"W_{i}_{w}" for i in range(1, 7) for w in range(1, 53)]
                + [f"{v}_mean_{d}" for v in SOIL_VARS for d in DEPTHS] + ["P_1", "P_2", "P_3"])


def khaki_row(loc: int, year: int, bushels: float, soil: float = 100.0) -> str:
    weather = [f"{i * 100 + w + loc / 10:g}" for i in range(1, 7) for w in range(1, 53)]
    soils = [f"{soil + j:g}" for j in range(12)]
    return ",".join([str(loc), str(year), f"{bushels:g}", *weather, *soils, "0.0", "35.0", "90.0"])


def khaki(root: Path, rows: list[str], header: list[str] = KHAKI_HEADER) -> Path:
    return write(root, "khaki/corn_samples.csv", [",".join(header), *rows])


def test_khaki_wide_file_splits_into_long_tables(tmp_path):
    khaki(tmp_path, [khaki_row(1, 2001, 150), khaki_row(0, 2001, 140.5), khaki_row(0, 2000, 120)])
    write(tmp_path, "khaki/Corn_Loc_ID.csv",
          "State,County,lat,long,ID_loc\r\nillinois,adams,39.97,-91.21,0\r\nillinois,de kalb,0.0,0.0,1\r\n")
    read = tables(tmp_path)
    assert read["county_yield"][["crop", "loc_id", "year", "yield_bu_ac"]].values.tolist() == [
        ["maize", "0", 2000, 120.0], ["maize", "0", 2001, 140.5], ["maize", "1", 2001, 150.0]]
    assert read["county_yield"]["yield_t_ha"].iloc[2] == pytest.approx(150 * 0.0627677, rel=1e-5)
    assert BUSHEL_T_HA["soybean"] == pytest.approx(0.0672511, rel=1e-5)
    weather = read["county_weather"].set_index(["loc_id", "year", "week"])
    assert len(weather) == 3 * 52 and list(weather.columns[1:]) == [f"w_{i}" for i in range(1, 7)]
    assert weather.loc[("1", 2001, 17), "w_3"] == 317.1
    soil = read["county_soil"]
    assert soil[["loc_id", "depth_top_cm", "depth_bottom_cm"]].values.tolist()[:2] == [["0", 0, 5], ["0", 5, 15]]
    assert soil["bdod_cg_cm3"].tolist()[:6] == [100.0, 101.0, 102.0, 103.0, 104.0, 105.0]
    assert soil["clay_g_kg"].iloc[0] == 106.0 and len(soil) == 12
    assert read["county_progress"]["progress_pct"].tolist()[:3] == [0.0, 35.0, 90.0]
    counties = read["counties"]
    assert counties[["loc_id", "state", "county", "lat_deg"]].values.tolist()[0] == ["0", "illinois", "adams",
                                                                                    39.97]
    assert counties["lon_deg"].isna().tolist() == [False, True]
    assert read["fill_values"].to_dict("records") == [
        {"file": "khaki/Corn_Loc_ID.csv", "column": "lat,long", "value": "0.0,0.0", "rows": 1, "first_line": 3}]
    for table in crops.read(tmp_path, Params()):
        validate_table(table)
    samples = tmp_path / "khaki" / "corn_samples.csv"
    samples.write_bytes(samples.read_bytes().replace(b"\n", b"\r\n"))
    crlf = tables(tmp_path)
    for name in ("county_yield", "county_weather", "county_soil", "county_progress"):
        pd.testing.assert_frame_equal(crlf[name], read[name])


@pytest.mark.parametrize(("header", "rows", "line", "problem"), [
    (["loc", *KHAKI_HEADER[1:]], [khaki_row(0, 2000, 1)], 1,
     "header must start with loc_ID,year,yield, found 'loc,year,yield'"),
    ([h for h in KHAKI_HEADER if h != "W_2_17"], [], 1, "missing column W_2_17 in the header"),
    ([*KHAKI_HEADER, "W_1_53"], [], 1, "unknown column 'W_1_53' in the header"),
    ([*KHAKI_HEADER, "S_extra_1"], [], 1, "unknown column 'S_extra_1' in the header"),
    (KHAKI_HEADER, [khaki_row(0, 2000, 1), khaki_row(0, 2000, 2)], 3,
     "duplicated loc_ID 0 and year 2000 (first at line 2)"),
    (KHAKI_HEADER, [khaki_row(0, 2000, -3)], 2, "negative value -3 in column yield"),
    (KHAKI_HEADER, [khaki_row(0, 2000, 1), khaki_row(1, 2000, 1), khaki_row(0, 2001, 1, soil=101)], 4,
     "soil value bdod_mean_0-5cm of loc_ID 0 differs from its value in another year (line 2)"),
    (KHAKI_HEADER, [khaki_row(0, 2000, 1).replace(",100,", ",-999,", 1)], 2,
     "negative value -999 in column bdod_mean_0-5cm"),
    (KHAKI_HEADER, [khaki_row(0, 2000, 1).replace(",102,", ",-9999,", 1)], 2,
     "value -9999 in column W_1_2 is outside the valid range [-100, 100000] (unexpected sentinel?)"),
])
def test_malformed_khaki_file(tmp_path, header, rows, line, problem):
    if not rows:
        rows = [",".join(["0"] * len(header))]
    path = khaki(tmp_path, rows, header)
    with pytest.raises(RawFormatError) as caught:
        read_khaki_samples(path)
    assert (caught.value.path, caught.value.line, caught.value.problem) == (str(path), line, problem)


def test_khaki_crop_and_lookup_errors(tmp_path):
    path = write(tmp_path, "khaki/rice_samples.csv", [",".join(KHAKI_HEADER), khaki_row(0, 2000, 1)])
    with pytest.raises(RawFormatError, match="file name must start with one of corn, soybean, soybeans"):
        read_khaki_samples(path)
    lookup = write(tmp_path, "khaki/Soybeans_Loc_ID.csv",
                   "State,County,lat,long,ID_loc\r\niowa,adair,41.3,-94.5,0\r\niowa,adams,41.0,-94.7,0\r\n")
    with pytest.raises(RawFormatError) as caught:
        read_khaki_locations(lookup)
    assert (caught.value.line, caught.value.problem) == (3, "duplicated ID_loc 0 (first at line 2)")
    lookup.write_text("State,County,lat,ID_loc\niowa,adair,41.3,0\n")
    with pytest.raises(RawFormatError, match=r"missing column\(s\) long in the header"):
        read_khaki_locations(lookup)


SOYBEAN_NOTE = ("lat_deg and lon_deg are null for the 3 soybean counties of Soybeans_Loc_ID.csv: its header "
                "State,County,ID_loc has no lat,long columns")


def test_soybean_lookup_without_coordinates_reads_with_null_coordinates_and_a_manifest_note(tmp_path):
    # the published soybean lookup: State,County,ID_loc, lower case, CRLF; the corn one has lat,long
    (tmp_path / "khaki").mkdir()
    (tmp_path / "khaki" / "Soybeans_Loc_ID.csv").write_bytes(
        b"State,County,ID_loc\r\nillinois,adams,0\r\nillinois,alexander,1\r\niowa,adair,2\r\n")
    (tmp_path / "khaki" / "Corn_Loc_ID.csv").write_bytes(
        b"State,County,lat,long,ID_loc\r\nillinois,adams,39.9787786,-91.2110065,0\r\n")
    read = {table.name: table for table in crops.read(tmp_path, Params(fill_values="error"))}
    counties = read["counties"].frame
    assert counties[["crop", "loc_id", "state", "county"]].values.tolist() == [
        ["maize", "0", "illinois", "adams"], ["soybean", "0", "illinois", "adams"],
        ["soybean", "1", "illinois", "alexander"], ["soybean", "2", "iowa", "adair"]]
    assert counties["lat_deg"].tolist()[0] == 39.9787786
    assert counties[["lat_deg", "lon_deg"]].isna().sum().tolist() == [3, 3]
    assert read["counties"].notes == (SOYBEAN_NOTE,)
    assert len(read["fill_values"].frame) == 0  # a lookup without coordinates is no fill (not an error either)
    manifest = write_tables(tmp_path / "out", crops.read(tmp_path, Params()), {"kind": "source"})
    assert manifest["tables"]["counties"]["notes"] == [SOYBEAN_NOTE]
    assert "notes" not in manifest["tables"]["county_yield"]
    frame, fills, note = read_khaki_locations(tmp_path / "khaki" / "Corn_Loc_ID.csv")
    assert (len(frame), fills, note) == (1, [], None)


def test_khaki_file_for_the_same_crop_twice_is_quarantined(tmp_path):
    khaki(tmp_path, [khaki_row(0, 2000, 1)])
    copy = tmp_path / "khaki" / "corn_samples_copy.csv"
    shutil.copy(tmp_path / "khaki" / "corn_samples.csv", copy)
    read = tables(tmp_path, on_error="quarantine")
    assert read["quarantine"]["file"].tolist() == [str(copy)]
    assert read["quarantine"]["problem"].iloc[0].startswith("loc_id 0 of crop maize is also in ")
    assert np.array_equal(read["county_yield"]["yield_bu_ac"].to_numpy(), [1.0])
