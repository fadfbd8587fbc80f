"""Synthetic crops: both native layouts, determinism, and the designed yield and confounding structure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from scibench_testing.files import folder_bytes
from scibench_testing.realdata import realdata, requires_realdata

from stages.sources import crops as reader
from stages.synthesize import crops
from stages.synthesize.crops import BU_AC_T_HA, Params

TINY = Params(n_counties=12, first_year=2014, last_year=2018)
MID = Params(n_counties=40, first_year=2005, last_year=2016)
SOURCES = ("yield", "meteo", "fpar", "ndvi", "soil", "crop_calendar")
HEADERS = {  # FORMATS.md section 2.2, as in the real files
    "yield": "crop_name,country_code,adm_id,harvest_year,yield,harvest_area,production",
    "meteo": "crop_name,adm_id,date,tmin,tmax,prec,rad,tavg,et0,vpd,cwb",
    "fpar": "crop_name,adm_id,date,fpar", "ndvi": "crop_name,adm_id,date,ndvi",
    "soil": "crop_name,adm_id,awc,bulk_density,drainage_class", "crop_calendar": "crop_name,adm_id,sos,eos",
}


def tables(root: Path) -> dict[str, pd.DataFrame]:
    return {t.name: t.frame for t in reader.read(root, reader.Params())}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    crops.write(root, TINY)
    return root


@pytest.fixture(scope="module")
def mid(tmp_path_factory) -> tuple[dict[str, pd.DataFrame], dict]:
    root = tmp_path_factory.mktemp("mid")
    crops.write(root, MID)
    return tables(root), json.loads((root / "_truth.json").read_text())


def test_tiny_files_are_in_both_native_layouts(tiny):
    names = folder_bytes(tiny)
    assert sorted(names) == sorted([f"maize/US/{s}_maize_US.csv" for s in SOURCES]
                                   + ["khaki/corn_samples.csv", "khaki/Corn_Loc_ID.csv", "_truth.json"])
    for source in SOURCES:
        text = names[f"maize/US/{source}_maize_US.csv"].decode("ascii")
        assert text.split("\n", 1)[0] == HEADERS[source] and "\r" not in text and text.endswith("\n")
    header = names["khaki/corn_samples.csv"].decode().split("\n", 1)[0].split(",")
    assert header[:3] == ["loc_ID", "year", "yield"] and len(header) == 3 + 6 * 52 + 66 + 16
    assert header[3] == "W_1_1" and header[314] == "W_6_52" and header[315] == "bdod_mean_0-5cm"
    assert header[-16:] == [f"P_{i}" for i in range(1, 17)]
    lookup = names["khaki/Corn_Loc_ID.csv"].decode()
    assert lookup.startswith("State,County,lat,long,ID_loc\r\n") and lookup.count("\r\n") == 13
    meteo_row = names["maize/US/meteo_maize_US.csv"].decode().split("\n")[1]
    assert re.fullmatch(r"maize,US-\d\d-\d{3},20140101(,-?\d+\.\d{1,3}){8}", meteo_row)


@requires_realdata("cybench", "maize", "NL")
@pytest.mark.parametrize("source", SOURCES)
def test_headers_are_the_real_files_headers(tiny, source):
    real = realdata("cybench", "maize", "NL", f"{source}_maize_NL.csv")
    written = (tiny / f"maize/US/{source}_maize_US.csv").read_text()
    assert written.split("\n", 1)[0] == real.read_text().split("\n", 1)[0]


def test_tiny_files_read_with_the_reader_and_both_layouts_agree(tiny):
    read = tables(tiny)
    assert len(read["quarantine"]) == 0
    assert len(read["meteo"]) == 12 * 1826 and len(read["soil"]) == len(read["counties"]) == 12
    assert read["meteo"]["adm_id"].str.fullmatch(r"US-(17|18|19|20|21|26|27|29|31|38|39|46)-\d\d[13579]").all()
    assert 0.9 * 60 <= len(read["yield"]) == len(read["county_yield"]) <= 60
    truth = json.loads((tiny / "_truth.json").read_text())["counties"]
    loc_of = {adm: str(entry["loc_id"]) for adm, entry in truth.items()}
    cy = read["yield"].assign(loc_id=read["yield"]["adm_id"].map(loc_of)).set_index(["loc_id", "harvest_year"])
    kh = read["county_yield"].set_index(["loc_id", "year"])
    joined = cy[["yield_t_ha"]].join(kh[["yield_bu_ac"]].rename_axis(["loc_id", "harvest_year"]), how="inner")
    assert len(joined) == len(kh)
    np.testing.assert_allclose(joined["yield_t_ha"], joined["yield_bu_ac"] * BU_AC_T_HA, atol=6e-5)
    assert read["yield"]["yield_t_ha"].between(3, 16).all()


def test_khaki_weekly_weather_is_the_weekly_mean_of_the_daily_meteo(tiny):
    read = tables(tiny)
    truth = json.loads((tiny / "_truth.json").read_text())
    adm = next(iter(truth["counties"]))
    loc = str(truth["counties"][adm]["loc_id"])
    daily = read["meteo"][read["meteo"]["adm_id"] == adm].iloc[:364]  # 2014: weeks 1-52
    weekly = daily["tmax_c"].to_numpy().reshape(52, 7).mean(axis=1)
    weather = read["county_weather"]
    khaki = weather[(weather["loc_id"] == loc) & (weather["year"] == 2014)]
    np.testing.assert_allclose(khaki["w_4"].to_numpy(), weekly, atol=0.002)
    assert truth["khaki_weather_variables"][3] == "tmax_c"


def test_same_seed_gives_identical_bytes_and_another_seed_differs(tmp_path, tiny):
    crops.write(tmp_path / "again", TINY)
    assert folder_bytes(tmp_path / "again") == folder_bytes(tiny)
    crops.write(tmp_path / "other", TINY.model_copy(update={"seed": 7}))
    assert folder_bytes(tmp_path / "other") != folder_bytes(tiny)


def test_ndvi_is_unsorted_on_disk_with_fills_read_as_counted_nulls(tmp_path):
    crops.write(tmp_path, TINY.model_copy(update={"ndvi_fill_fraction": 0.02}))
    lines = (tmp_path / "maize/US/ndvi_maize_US.csv").read_text().splitlines()[1:]
    dates = [line.split(",")[2] for line in lines]
    zeros = sum(line.endswith(",0.0") for line in lines)
    assert dates != sorted(dates) and zeros > 10
    read = tables(tmp_path)
    assert read["ndvi"]["ndvi"].isna().sum() == zeros
    assert read["fill_values"][["file", "value", "rows"]].values.tolist() == [
        ["maize/US/ndvi_maize_US.csv", "0.0", zeros]]
    assert read["ndvi"]["ndvi"].dropna().between(0, 1).all()


def test_weather_is_physically_consistent(mid):
    meteo = mid[0]["meteo"]
    assert (meteo["tmax_c"] >= meteo["tmin_c"]).all() and (meteo["rad_j_m2_d"] > 0).all()
    np.testing.assert_allclose(meteo["cwb_mm_d"], meteo["prec_mm_d"] - meteo["et0_mm_d"], atol=0.0011)
    month = pd.to_datetime(meteo["date"].astype(str)).dt.month
    assert meteo.loc[month == 7, "tavg_c"].mean() - meteo.loc[month == 1, "tavg_c"].mean() > 20
    assert 0.2 < (meteo["prec_mm_d"] > 0).mean() < 0.45
    annual = meteo.groupby("adm_id")["prec_mm_d"].mean() * 365
    lon = read_lon(mid[1], annual.index)
    assert annual.between(300, 1600).all() and np.corrcoef(lon, annual)[0, 1] > 0.5  # wetter to the east


def read_lon(truth: dict, adm_ids: pd.Index) -> np.ndarray:
    return np.array([truth["counties"][adm]["lon"] for adm in adm_ids])


def season_indices(read: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Yield with heat degree days and water deficit over [sos, eos - 25) from the read tables."""
    meteo, calendar = read["meteo"], read["crop_calendar"].set_index("adm_id")
    stamp = pd.to_datetime(meteo["date"].astype(str))
    frame = meteo.assign(year=stamp.dt.year, doy=stamp.dt.day_of_year).join(calendar[["sos_doy", "eos_doy"]],
                                                                            on="adm_id")
    frame = frame[(frame["doy"] >= frame["sos_doy"]) & (frame["doy"] < frame["eos_doy"] - 25)]
    frame = frame.assign(edd=(frame["tmax_c"] - 30).clip(lower=0),
                         deficit=frame["et0_mm_d"] - frame["prec_mm_d"])
    indices = frame.groupby(["adm_id", "year"])[["edd", "deficit"]].sum().rename_axis(["adm_id", "harvest_year"])
    return read["yield"].set_index(["adm_id", "harvest_year"])[["yield_t_ha"]].join(indices)


def test_yield_responds_to_heat_and_water_as_designed(mid):
    data = season_indices(mid[0])
    within = data.groupby(level=0).transform(lambda s: s - s.mean())  # county fixed effects
    years = within.index.get_level_values(1).to_numpy(float)
    x = np.column_stack([years - years.mean(), within["edd"], within["deficit"]])
    trend, edd, deficit = np.linalg.lstsq(x, within["yield_t_ha"].to_numpy(), rcond=None)[0]
    assert mid[1]["yield_model_t_ha"]["edd"] == -0.025
    assert -0.035 < edd < -0.015  # -0.025 t/ha per degree day above 30 degC
    assert deficit < -0.001  # water stress beyond the soil store costs yield
    assert 0.06 < trend < 0.16  # 0.11 t/ha per year


def test_early_planting_is_confounded_so_the_naive_effect_overstates_it(mid):
    read, truth = mid
    effect = truth["early_planting"]
    assert 0.2 < effect["true_ate_t_ha"] < 0.6
    assert effect["naive_difference_t_ha"] > effect["true_ate_t_ha"] + 0.4
    counties = pd.DataFrame(truth["counties"]).T
    early = read["yield"]["adm_id"].map(counties["early_planting"]).astype(bool)
    naive = read["yield"].loc[early, "yield_t_ha"].mean() - read["yield"].loc[~early, "yield_t_ha"].mean()
    assert naive == pytest.approx(effect["naive_difference_t_ha"], abs=1e-3)
    flags = counties["early_planting"].astype(bool)
    assert counties.loc[flags, "wealth"].mean() > counties.loc[~flags, "wealth"].mean() + 0.5
    soil = read["soil"].set_index("adm_id")["awc_cm_m"]
    assert soil[flags[flags].index].mean() > soil[flags[~flags].index].mean()
    sos = read["crop_calendar"].set_index("adm_id")["sos_doy"]
    assert sos[flags[flags].index].mean() < sos[flags[~flags].index].mean() - 5  # visible in the calendar


def test_modis_products_start_in_2001(tmp_path):
    crops.write(tmp_path / "a", Params(n_counties=2, first_year=1999, last_year=2001))
    read = tables(tmp_path / "a")
    assert str(read["meteo"]["date"].min()) == "1999-01-01" and str(read["fpar"]["date"].min()) == "2001-01-01"
    crops.write(tmp_path / "b", Params(n_counties=2, first_year=1990, last_year=1991))
    assert not (tmp_path / "b/maize/US/ndvi_maize_US.csv").exists()
    read = tables(tmp_path / "b")
    assert len(read["fpar"]) == len(read["ndvi"]) == 0 and len(read["county_yield"]) > 0


def test_params_are_validated():
    with pytest.raises(ValidationError):
        Params(n_counties=3, first_year=2001, last_year=2000)
    with pytest.raises(ValidationError):
        Params(n_counties=1106, first_year=2000, last_year=2001)
    with pytest.raises(ValidationError):
        Params(n_counties=3, first_year=2000, last_year=2001, unknown=1)


def test_warm_springs_plant_earlier_and_yield_more(mid):
    """The confounder: spring warmth moves both planting (Khaki progress) and yield, within counties."""
    read, truth = mid
    meteo = read["meteo"]
    stamp = pd.to_datetime(meteo["date"].astype(str))
    spring = meteo[stamp.dt.month.isin([4, 5])].assign(harvest_year=stamp.dt.year)
    warmth = spring.groupby(["adm_id", "harvest_year"])["tavg_c"].mean()
    loc_to_adm = {str(entry["loc_id"]): adm for adm, entry in truth["counties"].items()}
    progress = read["county_progress"].assign(adm_id=lambda f: f["loc_id"].map(loc_to_adm))
    half = progress[progress["progress_pct"] >= 50].groupby(["adm_id", "year"])["planting_week"].min()
    data = read["yield"].set_index(["adm_id", "harvest_year"])[["yield_t_ha"]].join(warmth)
    data["week"] = half.rename_axis(["adm_id", "harvest_year"])
    within = data.groupby(level=0).transform(lambda s: s - s.mean()).dropna()
    assert truth["planting_days_per_spring_c"] == -3.0
    assert np.corrcoef(within["tavg_c"], within["week"])[0, 1] < -0.3
    years = within.index.get_level_values(1).to_numpy(float)
    x = np.column_stack([np.ones(len(years)), years, within["tavg_c"], within["week"]])
    _, _, warm, week = np.linalg.lstsq(x, within["yield_t_ha"].to_numpy(), rcond=None)[0]
    assert warm > 0.1  # warm springs yield more ...
    x_naive = np.column_stack([np.ones(len(years)), years, within["week"]])
    naive = np.linalg.lstsq(x_naive, within["yield_t_ha"].to_numpy(), rcond=None)[0][2]
    assert naive < week  # ... so planting week alone takes credit for the spring's warmth


def test_spring_warmth_and_silking_vpd_enter_the_yield_as_designed():
    from stages.synthesize.crops import model
    from stages.synthesize.crops.counties import draw_counties
    c = draw_counties(1, 3)
    ones, zeros = np.ones(3), np.zeros(3)
    calm = model.Season(gdd=ones * 1350, edd=zeros, water_stress_mm=zeros, vpd_silking_hpa=ones * 9,
                        spring_warmth_c=zeros)
    warm = model.Season(**{**calm.__dict__, "spring_warmth_c": ones})
    dry = model.Season(**{**calm.__dict__, "vpd_silking_hpa": ones * 11})
    base = model.yield_t_ha(2010, c, calm, zeros.astype(bool), zeros)
    np.testing.assert_allclose(model.yield_t_ha(2010, c, warm, zeros.astype(bool), zeros) - base, 0.4)
    np.testing.assert_allclose(model.yield_t_ha(2010, c, dry, zeros.astype(bool), zeros) - base, -0.46)


def test_vpd_sensitivity_rises_over_the_years():
    from stages.synthesize.crops.model import vpd_sensitivity
    assert vpd_sensitivity(2000) == pytest.approx(-0.15)
    assert vpd_sensitivity(2018) == pytest.approx(-0.294)
