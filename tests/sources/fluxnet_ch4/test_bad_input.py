"""FLUXNET-CH4 reader on small files written to tmp_path: exact values, malformed input, quarantine."""

from __future__ import annotations

import datetime as dt
import gc
import threading
from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError

from stages.sources import fluxnet_ch4
from stages.sources.fluxnet_ch4 import Params, RawFormatError
from stages.tables import collect

# --- malformed inputs, written to tmp_path --------------------------------------------------------

DD_NAME = "FLX_US-Abc_FLUXNET-CH4_2018-2018_1-1/FLX_US-Abc_FLUXNET-CH4_DD_2018-2018_1-1.csv"
HH_NAME = DD_NAME.replace("_DD_", "_HH_")
DD = ["TIMESTAMP,FCH4,TA,P,FCH4_F,FCH4_F_ANNOPTLM,FCH4_F_ANNOPTLM_QC",
      "20180101,-9999,1.5,0.0,-9999,0.8874250398788494,3.0",
      "20180102,2.5,-9999,1.2,2.5,2.4,1.0",
      "20180103,-4.717584473038402e-05,3.0,0.0,1.0,1.1,1.0"]
HH = ["TIMESTAMP_START,TIMESTAMP_END,FCH4,TS_1,WTD,FCH4_F,FCH4_F_ANNOPTLM,FCH4_F_ANNOPTLM_QC",
      "201801010000,201801010030,12.5,3.25,-0.05,12.5,11.9,1.0",
      "201801010030,201801010100,-9999,3.5,-0.05,12.1,12.0,1.0",
      "201801010100,201801010130,-9999.0,3.75,-9999,-9999,12.2,3.0"]
META = ["SITE_ID,SITE_NAME,LAT,LON,IGBP,UTC_OFFSET", "US-ABC,Test marsh,37.5,-122.1,WET,-8"]


def write(root: Path, relative: str, lines: list[str] | str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(lines if isinstance(lines, str) else "\n".join(lines) + "\n")
    return path


def daily_error(tmp_path: Path, lines: list[str] | str, **params) -> RawFormatError:
    path = write(tmp_path, DD_NAME, lines)
    with pytest.raises(RawFormatError) as caught:
        fluxnet_ch4.read_daily(tmp_path, "US-Abc", **params)
    assert caught.value.path == str(path)
    return caught.value


def halfhourly_error(tmp_path: Path, lines: list[str]) -> RawFormatError:
    path = write(tmp_path, HH_NAME, lines)
    with pytest.raises(RawFormatError) as caught:
        fluxnet_ch4.read_halfhourly(tmp_path, "US-Abc", -8)
    assert caught.value.path == str(path)
    return caught.value


def test_a_small_daily_file_reads_with_nulls_and_exact_values(tmp_path):
    write(tmp_path, DD_NAME, "\n".join(DD))  # no trailing newline
    frame = fluxnet_ch4.read_daily(tmp_path, "us-abc")
    assert frame["date"].tolist() == [dt.date(2018, 1, d) for d in (1, 2, 3)]
    assert frame["fch4_nmol_m2_s"].tolist()[1:] == [2.5, -4.717584473038402e-05]
    assert frame["ta_c"].isna().tolist() == [False, True, False]
    assert frame["fch4_f_annoptlm_qc"].tolist() == [3, 1, 1]


def test_a_small_halfhourly_file_in_utc_with_float_sentinels(tmp_path):
    write(tmp_path, HH_NAME, HH)
    frame = fluxnet_ch4.read_halfhourly(tmp_path, "US-Abc", utc_offset_h=-8)
    assert frame["timestamp_start"].tolist() == [pd.Timestamp(f"2018-01-01 08:{m}", tz="UTC")
                                                 for m in ("00", "30")] + [pd.Timestamp("2018-01-01 09:00",
                                                                                        tz="UTC")]
    assert frame["fch4_nmol_m2_s"].isna().tolist() == [False, True, True]  # -9999 and -9999.0
    assert frame["wtd_m"].isna().tolist() == [False, False, True]
    assert frame["fch4_f_annoptlm_qc"].tolist() == [1, 1, 3]


@pytest.mark.parametrize(("lines", "line", "problem"), [
    ("", 1, "file is empty"),
    (DD[:1], 1, "no data rows after the column header"),
    ("\n".join(DD[:3]) + "\n20180103,2.5,3.0", 4, "expected 7 fields, found 3"),
    (DD[1:], 1, "missing column header: line 1 is a data row, expected TIMESTAMP, ..."),
    (["DATE" + DD[0][9:], *DD[1:]], 1,
     "column header must start with TIMESTAMP, found 'DATE,FCH4,TA,P,FCH4_F,FCH4_F_ANNOPTLM,FC'"),
    ([line.replace(",", ";") for line in DD], 1, "column header must start with TIMESTAMP, found "
                                                 "'TIMESTAMP;FCH4;TA;P;FCH4_F;FCH4_F_ANNOPT' (fields must "
                                                 "be separated by commas, found ';')"),
    ([DD[0], DD[1], DD[2].replace(",1.2,", ",1.2x,")], 3, "value '1.2x' in column P is not a number"),
    ([DD[0], DD[1], DD[2].replace(",-9999,", ",,")], 3, "empty value in column TA is not a number"),
    ([DD[0], DD[1].replace(",1.5,", ",1.5x,")], 2, "value '1.5x' in column TA is not a number"),
    ([*DD[:3], DD[2]], 4, "duplicated TIMESTAMP 20180102 (first at line 3)"),
    ([DD[0], DD[1].replace("20180101", "20180230")], 2, "impossible date in TIMESTAMP 20180230"),
    ([DD[0], DD[1].replace("20180101", "2018011")], 2,
     "value 2018011 in TIMESTAMP is not a YYYYMMDD timestamp"),
    ([DD[0], DD[1].replace("20180101", "-9999")], 2, "unexpected sentinel -9999 in TIMESTAMP"),
    ([DD[0], DD[1].replace("20180101", "2018-01-01")], 2, "value '2018-01-01' in TIMESTAMP is not an "
                                                          "integer timestamp"),
    ([*DD, "20190101,1,1,1,1,1,1.0"], 5, "TIMESTAMP 20190101 is outside the years 2018-2018 named in "
                                         "the file name"),
    ([DD[0], DD[1].replace("0.8874250398788494", "-9999")], 2, "unexpected sentinel -9999 in column "
                                                               "FCH4_F_ANNOPTLM (ANN gap-filled values are "
                                                               "never missing)"),
    ([DD[0], DD[1], DD[2].replace(",1.0", ",-9999.0")], 3, "unexpected sentinel -9999 in column "
                                                           "FCH4_F_ANNOPTLM_QC (ANN gap-filled values are "
                                                           "never missing)"),
    ([DD[0], DD[1], DD[2].replace(",1.0", ",4.0")], 3, "QC flag 4 in column FCH4_F_ANNOPTLM_QC outside "
                                                       "{0, 1, 2, 3}"),
    ([DD[0], DD[1].replace(",3.0", ",1.5")], 2,
     "QC flag 1.5 in column FCH4_F_ANNOPTLM_QC outside {0, 1, 2, 3}"),
    ([DD[0].replace(",P,", ",TA,"), *DD[1:]], 1, "duplicated column 'TA' in the column header"),
    ([DD[0].replace(",P,", ",p,"), *DD[1:]], 1, "column name 'p' is not a FLUXNET variable name (upper case "
                                                "letters, digits and underscores)"),
    ([DD[0], DD[1], "", DD[2], DD[2]], 5, "duplicated TIMESTAMP 20180102 (first at line 4)"),
    ([DD[0], " ", DD[1]], 2, "expected 7 fields, found 1"),  # found by fuzzing: only "" is an empty line
    ([DD[0], DD[1].replace("20180101", "9" * 40)], 2,  # found by fuzzing: beyond int64
     f"value '{'9' * 40}' in TIMESTAMP is not an integer timestamp"),
    ([DD[0], DD[1].replace(",1.5,", ",1.5\f,"), "x"], 2,  # a form feed does not end a line
     "value '1.5\\x0c' in column TA is not a number"),
])
def test_daily_file_errors_name_line_and_problem(tmp_path, lines, line, problem):
    error = daily_error(tmp_path, lines)
    assert (error.line, error.problem) == (line, problem)


def test_unknown_variables_are_kept_or_raise_per_params(tmp_path):
    lines = [DD[0] + ",FOO_BAR", *(row + ",-9999" for row in DD[1:])]
    write(tmp_path, DD_NAME, lines)
    kept = fluxnet_ch4.read_daily(tmp_path, "US-Abc")
    assert kept["foo_bar"].isna().all()
    tables = collect(fluxnet_ch4.read(tmp_path, Params()))
    assert tables["daily"].units["foo_bar"] == "unknown"
    error = daily_error(tmp_path, lines, unknown_columns="raise")
    assert (error.line, error.problem) == (1, "unknown variable 'FOO_BAR' (its base name is not in the "
                                              "FLUXNET-CH4/AmeriFlux vocabulary)")


def test_unsorted_rows_are_accepted_and_sorted(tmp_path):
    write(tmp_path, DD_NAME, [DD[0], DD[3], DD[1], DD[2]])
    frame = fluxnet_ch4.read_daily(tmp_path, "US-Abc")
    assert frame["date"].tolist() == [dt.date(2018, 1, d) for d in (1, 2, 3)]
    assert frame["fch4_f_annoptlm_nmol_m2_s"].tolist() == [0.8874250398788494, 2.4, 1.1]


@pytest.mark.parametrize(("lines", "line", "problem"), [
    ([HH[0], HH[1].replace("201801010000,201801010030", "201801010015,201801010045"), HH[2]], 2,
     "TIMESTAMP_START 201801010015 is not on the half-hour grid"),
    ([HH[0], HH[1], HH[2].replace(",201801010100,", ",201801010130,"), HH[3]], 3,
     "TIMESTAMP_END 201801010130 is not TIMESTAMP_START + 30 min"),
    ([HH[0], HH[1], HH[2], HH[2].replace("12.1", "12.2")], 4, "duplicated TIMESTAMP_START 201801010030 "
                                                              "(first at line 3)"),
    ([HH[0], HH[1].replace("201801010000,201801010030", "201801010000,201801010015")], 2,
     "TIMESTAMP_END - TIMESTAMP_START is 15 min in most rows; expected 30 (half-hourly) or 60 (hourly)"),
    ([HH[0], HH[1].replace("201801010000,", "201801012400,")], 2,
     "impossible time 201801012400 in TIMESTAMP_START"),
    ([HH[0], HH[1].replace("201801010000,", "20180101000,")], 2,
     "value 20180101000 in TIMESTAMP_START is not a YYYYMMDDHHMM timestamp"),
    ([HH[0], HH[1].replace(",11.9,", ",-9999,")], 2, "unexpected sentinel -9999 in column FCH4_F_ANNOPTLM "
                                                     "(ANN gap-filled values are never missing)"),
    ([HH[0], HH[1].replace(",1.0", ",7")], 2, "QC flag 7 in column FCH4_F_ANNOPTLM_QC outside {0, 1, 2, 3}"),
    ([HH[0], HH[1], HH[2][:30]], 3, "expected 8 fields, found 3"),
])
def test_halfhourly_file_errors_name_line_and_problem(tmp_path, lines, line, problem):
    error = halfhourly_error(tmp_path, lines)
    assert (error.line, error.problem) == (line, problem)


def test_hourly_rows_in_an_hh_file_are_read_with_a_60_minute_step(tmp_path):
    hourly = [HH[0], "201801010000,201801010100,1,1,1,1,1,1", "201801010100,201801010200,2,2,2,2,2,1"]
    write(tmp_path, HH_NAME, hourly)
    write(tmp_path, "FLX_AA-Flx_CH4-META_20201112135337801132.csv", META)
    tables = {n: t.frame for n, t in collect(fluxnet_ch4.read(tmp_path, Params())).items()}
    sites = tables["sites"].iloc[0]
    assert sites[["site_id", "subdaily_step_min", "n_subdaily", "utc_offset_h"]].tolist() == [
        "US-ABC", 60, 2, -8]
    assert sites[["site_name", "lat_deg", "lon_deg", "igbp"]].tolist() == ["Test marsh", 37.5, -122.1, "WET"]
    assert tables["halfhourly"]["timestamp_end"].iloc[-1] == pd.Timestamp("2018-01-01 10:00", tz="UTC")
    error = halfhourly_error(tmp_path, [HH[0], hourly[1], hourly[2].replace("201801010100,", "201801010130,")
                                        .replace(",201801010200,", ",201801010230,")])
    assert (error.line, error.problem) == (3, "TIMESTAMP_START 201801010130 is not on the hour grid")


def test_utc_offsets_come_from_params_before_the_metadata_file(tmp_path):
    write(tmp_path, HH_NAME, HH)
    write(tmp_path, "meta/FLX_AA-Flx_CH4-META_20201112135337801132.csv", META)
    tables = collect(fluxnet_ch4.read(tmp_path, Params(utc_offsets_h={"us-abc": -7})))
    assert tables["halfhourly"].frame["timestamp_start"].iloc[0] == pd.Timestamp("2018-01-01 07:00", tz="UTC")
    local = collect(fluxnet_ch4.read(tmp_path, Params(time_reference="local_standard")))
    assert local["halfhourly"].frame["timestamp_start"].iloc[0] == pd.Timestamp("2018-01-01 00:00")
    assert local["halfhourly"].units["timestamp_start"] == "local standard time"
    assert local["sites"].frame["utc_offset_h"].tolist() == [-8.0]


def test_quarantine_keeps_the_other_files_and_records_the_bad_one(tmp_path):
    write(tmp_path, DD_NAME, DD)
    bad = write(tmp_path, HH_NAME, [HH[0], HH[1], HH[1]])
    write(tmp_path, DD_NAME.replace("US-Abc", "DE-Xyz"), DD)
    write(tmp_path, "FLX_AA-Flx_CH4-META_20201112135337801132.csv", META)
    with pytest.raises(RawFormatError, match="duplicated TIMESTAMP_START"):
        list(fluxnet_ch4.read(tmp_path, Params()))
    tables = {n: t.frame for n, t in collect(fluxnet_ch4.read(tmp_path, Params(on_error="quarantine"))).items()}
    assert tables["quarantine"].to_dict("records") == [
        {"file": str(bad), "line": 3, "column": None, "problem": "duplicated TIMESTAMP_START 201801010000 (first"
         " at line 2)", "count": None}]
    assert tables["daily"]["site_id"].unique().tolist() == ["DE-Xyz", "US-ABC"]
    assert len(tables["halfhourly"]) == 0
    assert tables["sites"]["n_subdaily"].isna().all()


def test_missing_utc_offset_is_an_error_or_a_quarantine_entry(tmp_path):
    path = write(tmp_path, HH_NAME, HH)
    with pytest.raises(RawFormatError) as caught:
        list(fluxnet_ch4.read(tmp_path, Params()))
    assert caught.value.path == str(path) and caught.value.line is None
    assert caught.value.problem.startswith("no UTC offset for site US-Abc: give UTC_OFFSET")
    tables = {n: t.frame for n, t in collect(fluxnet_ch4.read(tmp_path, Params(on_error="quarantine"))).items()}
    assert len(tables["quarantine"]) == 1 and len(tables["sites"]) == 0


def test_file_name_problems(tmp_path):
    odd = write(tmp_path, "FLX_US-Abc_FLUXNET-CH4_DD_2018_1-1.csv", DD)
    with pytest.raises(RawFormatError) as caught:
        list(fluxnet_ch4.read(tmp_path, Params()))
    assert (caught.value.path, caught.value.problem) == (str(odd), "file name does not follow "
                                                         "FLX_<SITE>_FLUXNET-CH4_<DD|HH>_<Y1>-<Y2>_<version>.csv")
    odd.unlink()
    reversed_years = write(tmp_path, "FLX_US-Abc_FLUXNET-CH4_DD_2019-2018_1-1.csv", DD)
    with pytest.raises(RawFormatError, match="file name names years 2019-2018"):
        list(fluxnet_ch4.read(tmp_path, Params()))
    reversed_years.unlink()
    write(tmp_path, "FLX_US-Abc_FLUXNET-CH4_MM_2018-2018_1-1.csv", "not read")  # monthly: skipped
    write(tmp_path, DD_NAME, DD)
    second = write(tmp_path, "copy/" + DD_NAME.split("/")[1].replace("US-Abc", "US-ABC"), DD)
    tables = {n: t.frame for n, t in collect(fluxnet_ch4.read(tmp_path, Params(on_error="quarantine"))).items()}
    assert tables["quarantine"]["file"].tolist() == [str(second)]
    assert tables["quarantine"]["problem"].iloc[0].startswith("a second daily file for site US-ABC")
    assert tables["sites"]["site_id"].tolist() == ["US-Abc"]


@pytest.mark.parametrize(("row", "problem"), [
    ("US-ABC,Dup,1,1,WET,0", "duplicated SITE_ID US-ABC (first at line 2)"),
    ("DE-Xyz,Far,95.0,1,WET,0", "LAT '95.0' is not a number in [-90, 90]"),
    ("DE-Xyz,Off,50,1,WET,15", "UTC_OFFSET '15' is not a number in [-12, 14]"),
    ("Xyz,Bad,50,1,WET,1", "SITE_ID 'Xyz' is not a site code like US-Myb"),
    ("DE-Xyz,Short,50", "expected 6 fields, found 3"),
])
def test_metadata_errors_always_propagate(tmp_path, row, problem):
    write(tmp_path, DD_NAME, DD)
    path = write(tmp_path, "FLX_AA-Flx_CH4-META_2020.csv", [*META, row])
    with pytest.raises(RawFormatError) as caught:
        list(fluxnet_ch4.read(tmp_path, Params(on_error="quarantine")))
    assert (caught.value.path, caught.value.line, caught.value.problem) == (str(path), 3, problem)


def test_params_are_validated():
    with pytest.raises(ValidationError):
        Params(on_error="ignore")
    with pytest.raises(ValidationError):
        Params(utc_offsets_h={"US-Abc": 20})
    with pytest.raises(ValidationError):
        Params(utc_offsets_h={"USAbc": 1})
    with pytest.raises(ValidationError):
        Params(foo=1)


# --- reading order, vectorised checks ---------------------------------------------------------------


def test_sites_stack_in_code_order_but_raise_reports_the_first_bad_file_by_name(tmp_path):
    for site in ("US-Aaz", "US-AB1"):  # case-folded "us-aaz" < "us-ab1", but "US-AB1" < "US-Aaz"
        write(tmp_path, HH_NAME.replace("US-Abc", site), HH)
    params = Params(time_reference="local_standard")
    frame = {n: t.frame for n, t in collect(fluxnet_ch4.read(tmp_path, params)).items()}["halfhourly"]
    assert frame["site_id"].tolist() == ["US-AB1"] * 3 + ["US-Aaz"] * 3
    for site in ("US-Aaz", "US-AB1"):
        bad = write(tmp_path, HH_NAME.replace("US-Abc", site), [HH[0], HH[1], HH[1]])
    with pytest.raises(RawFormatError) as caught:
        list(fluxnet_ch4.read(tmp_path, params))
    assert caught.value.path == str(bad).replace("US-AB1", "US-Aaz") and caught.value.line == 3
    tables = {n: t.frame for n, t in collect(fluxnet_ch4.read(tmp_path, Params(time_reference="local_standard",
                                                                           on_error="quarantine"))).items()}
    assert [Path(f).name[4:10] for f in tables["quarantine"]["file"]] == ["US-AB1", "US-Aaz"]


def test_huge_finite_values_are_numbers_not_parse_errors(tmp_path):
    write(tmp_path, DD_NAME, [DD[0], DD[1].replace(",1.5,", ",1e308,"), DD[2].replace(",-9999,", ",1e308,")])
    frame = fluxnet_ch4.read_daily(tmp_path, "US-Abc")  # their sum overflows; each value is finite
    assert frame["ta_c"].tolist() == [1e308, 1e308]


# --- non-finite tokens: kept as nulls, counted per file and column in `quarantine` ---------------


def nonfinite_row(path: Path, column: str, count: int) -> dict:
    return {"file": str(path), "line": -1, "column": column, "count": count,
            "problem": f"non-finite value (inf/-inf/nan) in column {column} set to null"}


@pytest.mark.parametrize("on_error", ["raise", "quarantine"])
def test_non_finite_tokens_in_daily_and_halfhourly_files_become_nulls_and_counts(tmp_path, on_error):
    daily = write(tmp_path, DD_NAME, [DD[0], DD[1].replace(",1.5,", ",inf,"), DD[2].replace(",1.2,", ",-INF,"),
                                      DD[3].replace(",1.1,", ",nan,").replace(",3.0,", ",-inf,")])
    halfhourly = write(tmp_path, HH_NAME, [HH[0], HH[1].replace(",3.25,", ",Infinity,"),
                                           HH[2].replace(",3.5,", ",1e400,").replace(",1.0", ",NaN"), HH[3]])
    tables = {n: t.frame for n, t in collect(fluxnet_ch4.read(tmp_path, Params(
        on_error=on_error, utc_offsets_h={"US-Abc": -8}))).items()}
    assert tables["quarantine"].to_dict("records") == [
        nonfinite_row(daily, "FCH4_F_ANNOPTLM", 1), nonfinite_row(daily, "P", 1), nonfinite_row(daily, "TA", 2),
        nonfinite_row(halfhourly, "FCH4_F_ANNOPTLM_QC", 1), nonfinite_row(halfhourly, "TS_1", 2)]
    day = tables["daily"]
    assert day["ta_c"].isna().tolist() == [True, True, True]  # inf, -9999, -inf
    assert day["p_mm"].isna().tolist() == [False, True, False]
    assert day["fch4_f_annoptlm_nmol_m2_s"].isna().tolist() == [False, False, True]  # nan in a never-missing column
    assert day["fch4_f_annoptlm_qc"].tolist() == [3, 1, 1]
    half = tables["halfhourly"]
    assert half["ts_1_c"].isna().tolist() == [True, True, False]
    assert half["fch4_f_annoptlm_qc"].isna().tolist() == [False, True, False]  # a missing flag
    assert tables["sites"][["n_days", "n_subdaily"]].values.tolist() == [[3, 3]]


def test_non_finite_timestamps_stay_errors(tmp_path):
    error = daily_error(tmp_path, [DD[0], DD[1].replace("20180101,", "inf,")])
    assert (error.line, error.problem) == (2, "value 'inf' in TIMESTAMP is not an integer timestamp")


def test_a_failed_read_leaves_no_thread_behind(tmp_path):
    # found by fuzzing: the error's reference cycle kept the reading thread alive until a garbage
    # collection, and thousands of failed reads ran out of threads
    write(tmp_path, DD_NAME, [DD[0], DD[1], DD[1]])
    before = threading.active_count()
    gc.disable()
    try:
        with pytest.raises(RawFormatError, match="duplicated TIMESTAMP"):
            collect(fluxnet_ch4.read(tmp_path, Params()))
        assert threading.active_count() == before
    finally:
        gc.enable()
