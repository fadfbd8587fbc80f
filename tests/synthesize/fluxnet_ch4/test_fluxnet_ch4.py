"""Synthetic FLUXNET-CH4: native layout, DD consistent with HH, gaps and QC, methane structure."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from scibench_testing.files import folder_bytes
from scibench_testing.realdata import REALDATA, requires_realdata
from scipy.signal import lfilter

from stages.repository import validate_table
from stages.sources import fluxnet_ch4 as reader
from stages.synthesize import fluxnet_ch4
from stages.synthesize.fluxnet_ch4 import Params
from stages.synthesize.fluxnet_ch4.model import GROWING_TS_C, SUBSTRATE_TAU_DAYS
from stages.synthesize.fluxnet_ch4.sites import META_NAME, draw_sites
from stages.tables import collect

REAL = REALDATA / "fluxnet_ch4"
TINY = Params(n_sites=3, first_year=2018, last_year=2018)
MEDIUM = Params(n_sites=10, first_year=2018, last_year=2018)
NUMBER = re.compile(r"-?\d+(\.\d+)?(e-\d\d)?")


def read(root: Path, **params) -> dict[str, pd.DataFrame]:
    return {n: t.frame for n, t in collect(reader.read(root, reader.Params(**params))).items()}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    fluxnet_ch4.write(root, TINY)
    return root


@pytest.fixture(scope="module")
def medium(tmp_path_factory) -> dict[str, pd.DataFrame]:
    root = tmp_path_factory.mktemp("medium")
    fluxnet_ch4.write(root, MEDIUM)
    return read(root, time_reference="local_standard")


def test_tiny_files_are_in_the_native_layout(tiny):
    names = folder_bytes(tiny)
    assert len(names) == 1 + 3 * 2 and META_NAME in names
    data = [n for n in names if n != META_NAME]
    for name in data:
        folder, file_name = name.split("/")
        site, years = re.fullmatch(r"FLX_([A-Z]{2}-[A-Za-z]{3})_FLUXNET-CH4_(2018-2018)_1-1", folder).groups()
        assert file_name in (f"FLX_{site}_FLUXNET-CH4_{kind}_{years}_1-1.csv" for kind in ("DD", "HH"))
        text = names[name].decode("ascii")
        assert "\r" not in text and '"' not in text and text.endswith("\n")
        lines = text.splitlines()
        header = lines[0].split(",")
        daily = "_DD_" in file_name
        times = ["TIMESTAMP"] if daily else ["TIMESTAMP_START", "TIMESTAMP_END"]
        assert header[:len(times)] == times
        assert header[-2:] == ["FCH4_F_ANNOPTLM" if daily else "FCH4_F_ANNOPTLM_UNC", "FCH4_F_ANNOPTLM_QC"]
        fields = [line.split(",") for line in lines[1:200]]
        assert all(len(row) == len(header) for row in fields)
        values = [v for row in fields for v in row[len(times):]]
        assert all(NUMBER.fullmatch(v) for v in values) and "-9999.0" not in values
        assert {row[-1] for row in fields} <= {"1.0", "3.0"}
        assert all(v == "-9999" or v == repr(float(v)) for v in values)  # shortest round-trip text
    meta = names[META_NAME].decode().splitlines()
    assert len(meta) == 4
    assert meta[0].startswith("SITE_ID,SITE_NAME,FLUXNET-CH4_DATA_POLICY,COUNTRY,LAT,LON,IGBP,")


@requires_realdata("fluxnet_ch4")
def test_daily_columns_come_in_the_real_files_order(tiny):
    real_headers = [p.read_text().split("\n", 1)[0].split(",") for p in sorted(REAL.rglob("*_DD_*.csv"))]
    for path in tiny.rglob("*_DD_*.csv"):
        ours = path.read_text().split("\n", 1)[0].split(",")
        for real in real_headers:
            shared = [c for c in ours if c in real]
            assert shared == [c for c in real if c in ours], (path.name, real[:3])


def test_tiny_files_parse_into_valid_tables(tiny):
    tables = collect(reader.read(tiny, reader.Params()))
    for table in tables.values():
        validate_table(table)
    sites, daily, halfhourly = (tables[n].frame for n in ("sites", "daily", "halfhourly"))
    truth = {s.site_id: s for s in draw_sites(TINY.seed, TINY.n_sites, TINY.first_year, TINY.last_year)}
    assert sorted(truth) == sites["site_id"].tolist() and len(tables["quarantine"].frame) == 0
    for row in sites.itertuples():
        site = truth[row.site_id]
        assert (row.lat_deg, row.lon_deg, row.utc_offset_h) == (site.lat, site.lon, site.utc_offset_h)
        assert (row.first_date, row.last_date) == (site.first_day.item(), site.last_day.item())
        assert row.subdaily_step_min == site.step_min
        assert row.n_subdaily == row.n_days * 1440 // site.step_min
    assert sorted(sites["subdaily_step_min"].tolist()) == [30, 30, 60]
    assert daily["fch4_f_annoptlm_nmol_m2_s"].notna().all()
    first = halfhourly.groupby("site_id")["timestamp_start"].min()
    for site_id, start in first.items():
        offset = pd.Timedelta(hours=truth[site_id].utc_offset_h)
        assert start == pd.Timestamp(str(truth[site_id].first_day), tz="UTC") - offset


def test_daily_values_are_the_aggregates_of_the_halfhours(medium):
    daily, halfhourly = medium["daily"], medium["halfhourly"]
    hh = halfhourly.assign(date=halfhourly["timestamp_start"].dt.date)
    steps = hh.groupby(["site_id", "date"]).size()
    for column in [c for c in daily.columns if c not in ("site_id", "date")]:
        groups = hh.groupby(["site_id", "date"])[column]
        complete = groups.count() == steps
        if column == "fch4_f_annoptlm_qc":
            expected = groups.max().astype("float64")
        elif column in ("p_mm", "p_f_mm"):
            expected = groups.sum().where(complete)
        elif "_f_" in column:
            expected = groups.mean().where(complete)
        else:
            expected = groups.mean()
        actual = daily.set_index(["site_id", "date"])[column].astype("float64")
        actual.index = expected.index
        np.testing.assert_allclose(actual, expected.astype("float64"), rtol=1e-12, atol=1e-12, err_msg=column)


def test_gaps_fill_and_qc_flags(medium):
    hh = medium["halfhourly"]
    measured = hh["fch4_nmol_m2_s"].notna()
    assert 0.3 < 1 - measured.mean() < 0.75
    assert measured.astype(int).diff().abs().sum() < (~measured).sum() / 3  # runs, not single holes
    assert hh["fch4_f_annoptlm_nmol_m2_s"].notna().all()
    filled = hh["fch4_f_nmol_m2_s"]
    assert (filled[measured] == hh.loc[measured, "fch4_nmol_m2_s"]).all()
    assert ((hh["fch4_f_annoptlm_qc"] == 3) == filled.isna()).all()
    assert 0.05 < (hh["fch4_f_annoptlm_qc"] == 3).mean() < 0.5  # long gaps
    assert (hh["ta_f_c"].notna()).all() and (hh["p_f_mm"].notna()).all()  # ERA-filled met is complete
    assert hh["fch4_f_randunc_nmol_m2_s"].isna().equals(filled.isna())


def test_sites_measure_different_column_sets(medium):
    present = medium["daily"].groupby("site_id").agg(lambda c: c.notna().any())
    assert len(present.drop_duplicates()) >= 5  # column sets differ from site to site
    assert 0 < present["wtd_m"].sum() < len(present)
    assert 0 < present["ts_2_c"].sum() < len(present)
    assert present["ts_1_c"].all() and present["fch4_nmol_m2_s"].all()


def substrate_factor(ts_1: pd.Series, hysteresis: float) -> np.ndarray:
    """The model's substrate factor 1 - h + h * S, S from the daily soil temperature."""
    growing = np.clip(ts_1.interpolate(limit_direction="both").to_numpy() / GROWING_TS_C, 0.0, 1.0)
    alpha = 1.0 / (SUBSTRATE_TAU_DAYS + 1.0)
    pool = lfilter([alpha], [1, alpha - 1], growing, zi=[(1 - alpha) * growing[:30].mean()])[0]
    return 1 - hysteresis + hysteresis * pool


def test_q10_and_water_table_structure_is_recoverable(medium):
    sites = draw_sites(MEDIUM.seed, MEDIUM.n_sites, MEDIUM.first_year, MEDIUM.last_year)
    truth = {site.site_id: site for site in sites}
    fitted = drained = 0
    for site_id, day in medium["daily"].groupby("site_id"):
        site = truth[site_id]
        supply = np.log(substrate_factor(day["ts_1_c"], site.flux["hysteresis"]))
        ok = (day["fch4_nmol_m2_s"] > 0) & (day["fch4_f_annoptlm_nmol_m2_s"] > 3)
        ok &= day["wtd_m"].notna() & day["ts_1_c"].notna()
        if ok.sum() < 100 or day.loc[ok, "ts_1_c"].std() < 3:  # Q10 needs a range of temperatures
            continue
        x = np.column_stack([np.ones(ok.sum()), day.loc[ok, "ts_1_c"], np.minimum(day.loc[ok, "wtd_m"], 0)])
        y = np.log(day.loc[ok, "fch4_nmol_m2_s"]) - supply[ok.to_numpy()]
        slope, k_wtd = np.linalg.lstsq(x, y, rcond=None)[0][1:]
        assert slope == pytest.approx(np.log(site.flux["q10"]) / 10, rel=0.15), site_id
        if (day.loc[ok, "wtd_m"] < -0.05).mean() > 0.2:  # the water table was often below the surface
            assert k_wtd == pytest.approx(site.flux["k_wtd"], rel=0.3), site_id
            drained += 1
        fitted += 1
    assert fitted >= 4 and drained >= 2


def test_late_season_emits_more_than_early_season_at_one_temperature(medium):
    later = []
    for _, day in medium["daily"].groupby("site_id"):
        ok = (day["fch4_nmol_m2_s"] > 0) & day["ts_1_c"].between(5, 25)
        if ok.sum() < 100 or day.loc[ok, "ts_1_c"].std() < 3:
            continue
        x = np.column_stack([np.ones(ok.sum()), day.loc[ok, "ts_1_c"]])
        log_flux = np.log(day.loc[ok, "fch4_nmol_m2_s"])
        residual = log_flux - x @ np.linalg.lstsq(x, log_flux, rcond=None)[0]
        peak = day["ts_1_c"].rolling(31, center=True, min_periods=1).mean().idxmax()
        late = day.loc[ok].index > peak
        later.append(residual[late].mean() > residual[~late].mean())
    assert len(later) >= 4 and np.mean(later) >= 0.75


def test_methane_peaks_in_the_early_afternoon(medium):
    hh = medium["halfhourly"]
    hour = hh["timestamp_start"].dt.hour
    flux = hh["fch4_f_annoptlm_nmol_m2_s"]
    relative = flux / flux.groupby(hh["site_id"]).transform("mean")
    peaks = relative.groupby([hh["site_id"], hour]).mean().groupby(level=0).idxmax().map(lambda key: key[1])
    assert peaks.between(10, 16).mean() >= 0.8


def test_same_seed_gives_identical_bytes_and_another_seed_differs(tmp_path, tiny):
    fluxnet_ch4.write(tmp_path / "again", TINY)
    assert folder_bytes(tmp_path / "again") == folder_bytes(tiny)
    fluxnet_ch4.write(tmp_path / "other", TINY.model_copy(update={"seed": 7}))
    assert folder_bytes(tmp_path / "other") != folder_bytes(tiny)


def test_format_floats_matches_python_repr():
    values = np.array([0.8874250398788494, -4.717584473038402e-05, 0.0, 3.0, np.nan, 1e-4, 123456.5])
    assert fluxnet_ch4.format_floats(values).to_list() == [
        "0.8874250398788494", "-4.717584473038402e-05", "0.0", "3.0", "-9999", "0.0001", "123456.5"]


def test_params_are_validated():
    with pytest.raises(ValidationError):
        Params(n_sites=3, first_year=2019, last_year=2018)
    with pytest.raises(ValidationError):
        Params(n_sites=3, first_year=2018, last_year=2018, unknown=1)
