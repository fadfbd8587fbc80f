"""FLUXNET-CH4 reader: the real daily and AmeriFlux files in ../shared/realdata, then malformed inputs."""

from __future__ import annotations

import datetime as dt
import shutil

import numpy as np
import pandas as pd
import pytest
from scibench_testing.realdata import REALDATA, requires_realdata

from stages.repository import validate_table
from stages.sources import fluxnet_ch4
from stages.sources.fluxnet_ch4 import Params, RawFormatError
from stages.sources.fluxnet_ch4.columns import describe, describe_unknown
from stages.tables import collect

FLUXNET = REALDATA / "fluxnet_ch4"
AMERIFLUX = REALDATA / "ameriflux_base"
needs_real = requires_realdata("fluxnet_ch4")
needs_ameriflux = requires_realdata("ameriflux_base")
REAL_DAILY = {  # site -> (rows, first day, last day, columns in the file, FCH4 null days, QC 1 / QC 3 days)
    "US-EDN": (273, dt.date(2018, 1, 1), dt.date(2018, 9, 30), 46, 107, 182, 91),
    "BW-Gum": (365, dt.date(2018, 1, 1), dt.date(2018, 12, 31), 35, 174, 287, 78),
    "CA-SCB": (1417, dt.date(2014, 1, 1), dt.date(2017, 11, 17), 52, 769, 825, 592),
}


# --- real files -----------------------------------------------------------------------------------


@needs_real
@pytest.mark.parametrize("site", REAL_DAILY)
def test_every_real_daily_file_reads_completely(site):
    rows, first, last, n_columns, fch4_null, qc1, qc3 = REAL_DAILY[site]
    frame = fluxnet_ch4.read_daily(FLUXNET, site)
    assert len(frame) == rows and frame.shape[1] == n_columns
    assert frame["date"].iloc[0] == first and frame["date"].iloc[-1] == last
    days = frame["date"].to_numpy().astype("datetime64[D]")
    assert (np.diff(days).astype(int) == 1).all()
    assert int(frame["fch4_nmol_m2_s"].isna().sum()) == fch4_null
    assert frame["fch4_f_annoptlm_qc"].dtype == "Int8"
    assert frame["fch4_f_annoptlm_qc"].value_counts().to_dict() == {1: qc1, 3: qc3}
    assert not frame[["fch4_f_annoptlm_nmol_m2_s", "nee_f_annoptlm_umol_m2_s"]].isna().any().any()
    assert (frame.drop(columns=["date", "fch4_f_annoptlm_qc"]).dtypes == "float64").all()
    assert not (frame.select_dtypes("float64") == -9999).any().any()


@needs_real
def test_first_real_rows_are_exact():
    edn = fluxnet_ch4.read_daily(FLUXNET, "US-EDN").iloc[0]
    assert edn["fch4_f_annoptlm_nmol_m2_s"] == 0.8874250398788494
    assert edn[["ta_f_c", "p_f_mm", "p_mm", "fch4_f_annoptlm_qc"]].tolist() == [
        12.674936170212765, 0.21899999999999997, 0.0, 3]
    assert pd.isna(edn["ta_c"]) and pd.isna(edn["fch4_nmol_m2_s"]) and pd.isna(edn["wtd_m"])
    scb = fluxnet_ch4.read_daily(FLUXNET, "CA-SCB").iloc[0]
    assert scb["reco_dt_umol_m2_s"] == 3.2925581908227665e-08  # scientific notation in the file
    assert scb["fch4_f_annoptlm_nmol_m2_s"] == 13.2954232864999
    gum = fluxnet_ch4.read_daily(FLUXNET, "bw-gum").iloc[-1]  # site codes match ignoring case
    assert gum["fch4_f_annoptlm_nmol_m2_s"] == 445.5781218916507


@needs_real
def test_real_column_names_follow_the_unit_rules():
    columns = set(fluxnet_ch4.read_daily(FLUXNET, "CA-SCB").columns)
    assert {"fch4_nmol_m2_s", "fch4_f_nmol_m2_s", "fch4_f_annoptlm_nmol_m2_s", "fch4_f_annoptlm_qc",
            "ta_c", "ta_f_c", "ts_1_c", "ts_8_c", "wtd_m", "wtd_f_m", "p_mm", "d_snow_cm", "vpd_hpa",
            "pa_kpa", "rh_f_pct", "gpp_nt_umol_m2_s", "sw_in_w_m2", "g_f_w_m2"} <= columns


@needs_real
def test_read_yields_sorted_valid_tables_for_the_real_folder():
    tables = collect(fluxnet_ch4.read(FLUXNET, Params()))
    assert list(tables) == ["halfhourly", "daily", "sites", "quarantine"]
    for table in tables.values():
        validate_table(table)
    daily, sites = tables["daily"].frame, tables["sites"].frame
    assert daily["site_id"].unique().tolist() == ["BW-Gum", "CA-SCB", "US-EDN"]
    assert len(daily) == 273 + 365 + 1417 and str(daily["date"].dtype) == "date32[day][pyarrow]"
    assert sites[["site_id", "n_days", "product", "product_version"]].values.tolist() == [
        ["BW-Gum", 365, "FLUXNET-CH4", "1-1"], ["CA-SCB", 1417, "FLUXNET-CH4", "1-1"],
        ["US-EDN", 273, "FLUXNET-CH4", "1-1"]]
    assert sites["last_date"].tolist() == [dt.date(2018, 12, 31), dt.date(2017, 11, 17), dt.date(2018, 9, 30)]
    assert sites["subdaily_step_min"].isna().all() and len(tables["halfhourly"].frame) == 0
    assert daily.loc[daily["site_id"] == "BW-Gum", "wtd_m"].isna().all()  # BW-Gum has no WTD column
    assert tables["daily"].units["fch4_f_annoptlm_qc"] == "1"
    assert tables["daily"].units["fch4_nmol_m2_s"] == "nmol/m2/s"


@needs_real
def test_crlf_line_endings_read_identically(tmp_path):
    source = next(FLUXNET.glob("FLX_US-EDN*/*_DD_*.csv"))
    target = tmp_path / source.parent.name / source.name
    target.parent.mkdir()
    target.write_bytes(source.read_bytes().replace(b"\n", b"\r\n"))
    pd.testing.assert_frame_equal(fluxnet_ch4.read_daily(tmp_path, "US-EDN"),
                                  fluxnet_ch4.read_daily(FLUXNET, "US-EDN"))


@needs_real
def test_site_codes_match_ignoring_case_in_file_and_folder_names(tmp_path):
    source = next(FLUXNET.glob("FLX_BW-Gum*/*_DD_*.csv"))
    target = tmp_path / "data" / "BW-GUM" / source.name.replace("BW-Gum", "BW-GUM")
    target.parent.mkdir(parents=True)
    shutil.copy(source, target)
    frame = fluxnet_ch4.read_daily(tmp_path, "bw-gum")
    assert len(frame) == 365
    sites = collect(fluxnet_ch4.read(tmp_path, Params()))["sites"].frame
    assert sites["site_id"].tolist() == ["BW-GUM"]  # spelled as in the file name without a META file


@needs_ameriflux
def test_real_ameriflux_base_file_in_utc():
    frame = fluxnet_ch4.read_halfhourly(AMERIFLUX, "US-CRT", utc_offset_h=-5)
    assert len(frame) == 96
    assert frame["fch4_nmol_m2_s"].isna().all() and frame["ch4_nmol_mol"].isna().all()
    assert str(frame["timestamp_start"].dtype) == "datetime64[ns, UTC]"
    assert frame["timestamp_start"].iloc[0] == pd.Timestamp("2011-01-01 05:00", tz="UTC")
    assert frame["timestamp_end"].iloc[-1] == pd.Timestamp("2011-01-03 05:00", tz="UTC")
    assert ((frame["timestamp_end"] - frame["timestamp_start"]) == pd.Timedelta("30min")).all()
    first = frame.iloc[0]
    assert first[["g_1_1_1_w_m2", "rh_pct", "ts_1_1_1_c", "wtd_m", "lw_in_w_m2"]].tolist() == [
        27.4496, 92.3416424, 3.468005, -0.9132943, 368.5068]
    assert frame["p_mm"].iloc[1] == 0.254
    assert frame["h_w_m2"].isna().sum() in range(43, 59)


@needs_ameriflux
def test_real_ameriflux_base_in_local_standard_time_and_through_read(tmp_path):
    local = fluxnet_ch4.read_halfhourly(AMERIFLUX, "us-crt")
    assert local["timestamp_start"].iloc[0] == pd.Timestamp("2011-01-01 00:00")
    with pytest.raises(RawFormatError, match="no UTC offset for site US-CRT"):
        list(fluxnet_ch4.read(AMERIFLUX, Params()))
    tables = collect(fluxnet_ch4.read(AMERIFLUX, Params(utc_offsets_h={"US-CRT": -5})))
    for table in tables.values():
        validate_table(table)
    sites = tables["sites"].frame.iloc[0]
    assert sites[["site_id", "product", "product_version", "subdaily_step_min", "n_subdaily"]].tolist() == [
        "US-CRT", "AmeriFlux BASE", "2-5", 30, 96]
    assert sites["utc_offset_h"] == -5 and pd.isna(sites["first_date"])
    assert tables["halfhourly"].units["timestamp_end"] == "UTC"
    crlf = tmp_path / "AMF_US-CRT_BASE_HH_2-5.csv"
    crlf.write_bytes((AMERIFLUX / crlf.name).read_bytes().replace(b"\n", b"\r\n"))
    pd.testing.assert_frame_equal(fluxnet_ch4.read_halfhourly(tmp_path, "US-CRT", -5),
                                  fluxnet_ch4.read_halfhourly(AMERIFLUX, "US-CRT", -5))


# --- names and units ------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "column", "unit", "is_flag"), [
    ("FCH4", "fch4_nmol_m2_s", "nmol/m2/s", False), ("FCH4_F", "fch4_f_nmol_m2_s", "nmol/m2/s", False),
    ("FCH4_F_ANNOPTLM", "fch4_f_annoptlm_nmol_m2_s", "nmol/m2/s", False),
    ("FCH4_F_ANNOPTLM_QC", "fch4_f_annoptlm_qc", "1", True), ("TA", "ta_c", "degC", False),
    ("TS_1", "ts_1_c", "degC", False), ("TS_2_1_1", "ts_2_1_1_c", "degC", False),
    ("WTD", "wtd_m", "m", False),
    ("P", "p_mm", "mm", False), ("P_F", "p_f_mm", "mm", False), ("PA", "pa_kpa", "kPa", False),
    ("PPFD_IN_F", "ppfd_in_f_umol_m2_s", "umol/m2/s", False), ("SW_IN_POT", "sw_in_pot_w_m2", "W/m2", False),
    ("H", "h_w_m2", "W/m2", False), ("H2O", "h2o_mmol_mol", "mmol/mol", False), ("ZL", "zl", "1", False),
    ("FCH4_F_RANDUNC", "fch4_f_randunc_nmol_m2_s", "nmol/m2/s", False), ("NEE_PI", "nee_pi_umol_m2_s",
                                                                         "umol/m2/s", False),
])
def test_variable_names_become_snake_case_with_unit_suffixes(raw, column, unit, is_flag):
    variable = describe(raw)
    assert (variable.column, variable.unit, variable.is_flag) == (column, unit, is_flag)
    assert variable.never_missing == ("ANNOPTLM" in raw)


def test_unknown_names_are_recognised_as_such():
    assert describe("FC_SSITC_TEST") is None and describe("XYZ") is None and describe("TAX") is None
    assert describe_unknown("FC_SSITC_TEST").column == "fc_ssitc_test"
    assert describe_unknown("FC_SSITC_TEST").unit == "unknown"


# --- non-finite tokens in real-shaped daily text ---------------------------------------------------


@needs_real
def test_inf_tokens_in_derived_columns_of_a_real_shaped_daily_file_become_nulls_and_counts(tmp_path):
    name = "FLX_CA-SCB_FLUXNET-CH4_2014-2017_1-1/FLX_CA-SCB_FLUXNET-CH4_DD_2014-2017_1-1.csv"
    header, *rows = (FLUXNET / name).read_text().splitlines()[:6]  # the real header and first 5 days
    names = header.split(",")
    replaced = {(0, "RECO_NT"): "inf", (1, "RECO_NT"): "-inf", (2, "GPP_DT"): "-inf", (2, "RECO_NT"): "inf",
                (3, "FCH4_F_ANNOPTLM"): "nan", (4, "FCH4_F_ANNOPTLM_QC"): "NaN"}
    fields = [row.split(",") for row in rows]
    for (row, column), token in replaced.items():
        fields[row][names.index(column)] = token
    path = tmp_path / name
    path.parent.mkdir()
    path.write_text("\n".join([header, *(",".join(f) for f in fields)]) + "\n")
    tables = {n: t.frame for n, t in collect(fluxnet_ch4.read(tmp_path, Params())).items()}
    problem = "non-finite value (inf/-inf/nan) in column {} set to null"
    assert tables["quarantine"][["file", "line", "column", "problem", "count"]].values.tolist() == [
        [str(path), -1, column, problem.format(column), count]
        for column, count in (("FCH4_F_ANNOPTLM", 1), ("FCH4_F_ANNOPTLM_QC", 1), ("GPP_DT", 1), ("RECO_NT", 3))]
    daily = tables["daily"]
    real = fluxnet_ch4.read_daily(FLUXNET, "CA-SCB").iloc[:5]
    assert daily["reco_nt_umol_m2_s"].isna().tolist() == [True, True, True, False, False]
    assert daily["gpp_dt_umol_m2_s"].isna().tolist() == [False, False, True, False, False]
    assert daily["fch4_f_annoptlm_nmol_m2_s"].isna().tolist() == [False, False, False, True, False]
    assert daily["fch4_f_annoptlm_qc"].isna().tolist() == [False, False, False, False, True]
    untouched = [c for c in real.columns if c not in ("date", "reco_nt_umol_m2_s", "gpp_dt_umol_m2_s",
                                                       "fch4_f_annoptlm_nmol_m2_s", "fch4_f_annoptlm_qc")]
    pd.testing.assert_frame_equal(daily[untouched].reset_index(drop=True), real[untouched].reset_index(drop=True))
