"""Synthetic CAMELS-US: native layout, determinism, gaps, hydrological structure and realism."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from scibench_testing.files import folder_bytes
from scibench_testing.realdata import realdata, requires_realdata
from scipy.stats import spearmanr

from stages.sources import camels_us as reader
from stages.synthesize import camels_us
from stages.synthesize.camels_us import Params, realism
from stages.synthesize.camels_us.basins import FILE_COLUMNS, draw_basins
from stages.tables import collect

TINY = Params(n_basins=8, first_year=2000, last_year=2002)
DEFAULT = Params(n_basins=20, first_year=2000, last_year=2009)
TINY_PROFILE = Params(n_basins=16, first_year=2000, last_year=2002)  # params.yaml's tiny scale
FORCING_ROW = re.compile(r"\d{4} \d{2} \d{2} 12(\t-?\d+\.\d{2}){7}")
FLOW_ROW = re.compile(r"\d{8} \d{4} \d{2} \d{2} ( *-?\d+\.\d{2}) (A|A:e|M)")  # " %8.2f" in the real


def tables(root: Path) -> dict[str, pd.DataFrame]:
    return {n: t.frame for n, t in collect(reader.read(root, reader.Params())).items()}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    camels_us.write(root, TINY)
    return root


@pytest.fixture(scope="module")
def tiny_profile(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("tiny_profile")
    camels_us.write(root, TINY_PROFILE)
    return root, realism.measure(root, TINY_PROFILE)


@pytest.fixture(scope="module")
def default(tmp_path_factory) -> dict[str, pd.DataFrame]:
    root = tmp_path_factory.mktemp("default")
    camels_us.write(root, DEFAULT)
    return tables(root)


def test_tiny_files_are_in_the_native_layout(tiny):
    names = folder_bytes(tiny)
    forcing = [n for n in names if n.startswith("basin_mean_forcing/")]
    flows = [n for n in names if n.startswith("usgs_streamflow/")]
    assert len(forcing) == len(flows) == 8 and len(names) == 8 + 8 + 7
    for name in forcing:
        folder, file_name = name.rsplit("/", 1)
        assert re.fullmatch(r"basin_mean_forcing/daymet/(01|03|10|14|17)", folder)
        assert re.fullmatch(r"\d{8}_lump_cida_forcing_leap\.txt", file_name)
        lines = names[name].decode().split("\n")
        assert re.fullmatch(r" *-?\d+\.\d{2}", lines[0]) and len(lines[0]) == 7
        assert re.fullmatch(r" *\d+\.\d{2}", lines[1]) and re.fullmatch(r" *\d+", lines[2])
        assert lines[3] == ("Year Mnth Day Hr dayl(s) prcp(mm/day) srad(W/m2) swe(mm) tmax(C) "
                            "tmin(C) vp(Pa)")
        assert all(FORCING_ROW.fullmatch(line) for line in lines[4:-1]) and lines[-1] == ""
        assert lines[4].startswith("2000 01 01 12\t") and len(lines) == 4 + 1096 + 1
    for name in flows:
        gauge = name.split("/")[-1][:8]
        lines = names[name].decode().splitlines()
        matches = [FLOW_ROW.fullmatch(line) for line in lines]
        assert len(lines) == 1096 and all(m and len(m.group(1)) >= 8 for m in matches)
        assert all(line.startswith(gauge + " ") for line in lines)


def test_attribute_files_have_the_real_columns(tiny):
    for group, columns in FILE_COLUMNS.items():
        path = tiny / "camels_attributes_v2.0" / f"camels_{group}.txt"
        header = path.read_text().split("\n", 1)[0]
        assert header == ";".join(["gauge_id", *columns.split()])


@requires_realdata("camels_us", "camels_attributes_v2.0")
@pytest.mark.parametrize("group", sorted(FILE_COLUMNS))
def test_attribute_headers_are_the_real_files_headers(tiny, group):
    real = realdata("camels_us", "camels_attributes_v2.0", f"camels_{group}.txt")
    header = (tiny / "camels_attributes_v2.0" / real.name).read_text().split("\n", 1)[0]
    assert header == real.read_text().split("\n", 1)[0]


def test_tiny_files_parse_with_the_readers(tiny):
    read = tables(tiny)
    attributes, forcing = read["attributes"], read["daily"]
    assert len(attributes) == 8 and len(forcing) == 8 * 1096
    assert len(read["quarantine"]) == 0
    assert attributes["gauge_id"].str.fullmatch(r"\d{8}").all()
    assert sorted(attributes["huc_02"].unique()) == ["01", "03", "10", "14", "17"]
    assert not attributes.drop(columns=["geol_2nd_class", "geol_porosity", "root_depth_50_m",
                                        "root_depth_99_m", "slope_fdc", "stream_elas", "hfd_mean_d",
                                        "high_prec_timing", "low_prec_timing"]).isna().any().any()
    assert attributes["dom_land_cover"].str.startswith(" ").sum() == 0
    relative = attributes["header_area_m2"] / 1e6 / attributes["area_gages2_km2"] - 1
    assert relative.abs().max() < 0.1
    assert (forcing["tmax_c"] > forcing["tmin_c"]).all()
    assert forcing[["dayl_s", "srad_w_m2", "vp_pa", "prcp_mm_d", "swe_mm"]].ge(0).all().all()


def test_same_seed_gives_identical_bytes_and_another_seed_differs(tmp_path, tiny):
    camels_us.write(tmp_path / "again", TINY)
    assert folder_bytes(tmp_path / "again") == folder_bytes(tiny)
    camels_us.write(tmp_path / "other", TINY.model_copy(update={"seed": 7}))
    other = folder_bytes(tmp_path / "other")
    assert other != folder_bytes(tiny)


def test_chunking_does_not_change_any_byte(tmp_path, tiny, monkeypatch):
    monkeypatch.setattr(camels_us, "CHUNK", 3)
    camels_us.write(tmp_path, TINY)
    assert folder_bytes(tmp_path) == folder_bytes(tiny)


def test_gaps_are_written_as_sentinels_and_read_as_null(tiny):
    flow = tables(tiny)["daily"]
    missing = flow["qobs_flag"] == "M"
    assert 0.01 < missing.mean() < 0.04  # gap_fraction 0.02, in runs
    assert (flow["qobs_mm_d"].isna() == missing).all()
    assert (flow["qobs_cfs"].isna() == missing).all()
    for path in (tiny / "usgs_streamflow").rglob("*.txt"):
        for line in path.read_text().splitlines():
            assert (line.split()[4] == "-999.00") == line.endswith(" M")
    runs = missing.astype(int).diff().fillna(0).eq(1).sum()
    assert runs < missing.sum() / 2  # runs of days, not scattered single days


def test_no_gaps_when_gap_fraction_is_zero(tmp_path):
    camels_us.write(tmp_path, Params(n_basins=2, first_year=2001, last_year=2001, gap_fraction=0))
    flow = tables(tmp_path)["daily"]
    assert len(flow) == 2 * 365 and not flow["qobs_mm_d"].isna().any()


def test_hydrological_attributes_are_computed_from_the_written_series(default):
    read = default
    means = read["daily"].groupby("gauge_id")["qobs_mm_d"].mean()
    p_means = read["daily"].groupby("gauge_id")["prcp_mm_d"].mean()
    attributes = read["attributes"].set_index("gauge_id")
    np.testing.assert_allclose(attributes["q_mean_mm_d"], means, rtol=1e-9)
    np.testing.assert_allclose(attributes["p_mean_mm_d"], p_means, rtol=1e-9)


def test_runoff_ratio_decreases_with_aridity(default):
    attributes = default["attributes"]
    assert spearmanr(attributes["aridity"], attributes["runoff_ratio"]).statistic < -0.5


def test_regions_form_distinct_regimes(default):
    by_region = default["attributes"].groupby("huc_02")[
        ["aridity", "frac_snow", "baseflow_index", "hfd_mean_d"]].median()
    assert by_region["aridity"].idxmax() == "10"  # semi-arid plains
    assert by_region.loc["10", "baseflow_index"] < by_region["baseflow_index"].drop("10").min()
    assert by_region.loc["03", "frac_snow"] < 0.05  # rain-fed Southeast
    assert by_region.loc["14", "frac_snow"] > 0.4 and by_region["hfd_mean_d"].idxmax() == "14"


def test_snow_basins_peak_in_spring(default):
    flow = default["daily"].assign(month=pd.to_datetime(default["daily"]["date"].astype(str)).dt.month)
    snowy = default["attributes"].query("frac_snow > 0.4")["gauge_id"]
    assert len(snowy) >= 3
    peaks = flow[flow["gauge_id"].isin(snowy)].groupby(["gauge_id", "month"])["qobs_mm_d"].mean()
    assert peaks.groupby(level=0).idxmax().map(lambda key: key[1]).between(4, 6).all()


def test_streamflow_is_predictable_from_lagged_precipitation_and_melt(default):
    joined = default["daily"]
    scores = []
    for _, basin in joined.groupby("gauge_id"):
        rain, melt = basin["prcp_mm_d"], (-basin["swe_mm"].diff()).clip(lower=0).fillna(0)
        features = pd.DataFrame({
            "p_0_6": rain.rolling(7, min_periods=1).sum(),
            "p_7_13": rain.shift(7).rolling(7, min_periods=1).sum(),
            "p_14_43": rain.shift(14).rolling(30, min_periods=1).sum(),
            "melt_0_6": melt.rolling(7, min_periods=1).sum(),
            "melt_7_36": melt.shift(7).rolling(30, min_periods=1).sum(),
        }).fillna(0)
        observed = basin["qobs_mm_d"].notna().to_numpy()
        x = np.column_stack([np.ones(observed.sum()), features.to_numpy()[observed]])
        y = basin["qobs_mm_d"].to_numpy()[observed]
        residual = y - x @ np.linalg.lstsq(x, y, rcond=None)[0]
        scores.append(1 - residual.var() / y.var())
    assert np.median(scores) > 0.3


def test_params_are_validated():
    with pytest.raises(ValidationError):
        Params(n_basins=3, first_year=2001, last_year=2000)
    with pytest.raises(ValidationError):
        Params(n_basins=3, first_year=2000, last_year=2001, unknown=1)


def test_a_perfect_model_on_the_published_forcing_is_good_but_not_perfect(tiny_profile):
    _, figures = tiny_profile  # the generator's model and true parameters, published forcing
    assert 0.7 <= figures["perfect_model_nse_median"] <= 0.93
    assert figures["climatology_nse_median"] < figures["perfect_model_nse_median"] - 0.1


def test_the_region_explains_only_part_of_the_signatures_variance(tiny_profile):
    _, figures = tiny_profile
    assert sorted(figures["region_r2"]) == ["baseflow_index", "high_q_freq", "runoff_ratio"]
    for name, r2 in figures["region_r2"].items():
        assert r2 < 0.85, name


def test_published_precipitation_undercatches_snow_more_than_rain(tiny_profile):
    catch = tiny_profile[1]["prcp_undercatch"]
    assert 0.85 < catch["rain_days"] < 0.97 and 0.8 < catch["all_days"] < 0.97
    assert catch["snow_days"] < catch["rain_days"] - 0.02


def test_files_publish_erroneous_forcing_and_a_swe_product_not_the_truth(tiny_profile):
    root, figures = tiny_profile
    basins = draw_basins(TINY_PROFILE.seed, TINY_PROFILE.n_basins)
    truth = camels_us.simulate(TINY_PROFILE, basins, np.arange(TINY_PROFILE.n_basins))
    files = realism.read_published(root, basins.gauge_id)
    for name in ("prcp", "tmax", "tmin", "swe"):  # re-simulation reproduces the files
        np.testing.assert_allclose(files[name], truth[name], atol=0.006)
    assert np.abs(files["prcp"] - truth["true_prcp"]).mean() > 0.3
    temperature_error = np.abs((files["tmax"] + files["tmin"]) / 2 - truth["true_tmean"])
    assert 0.1 < temperature_error.mean() < 1.5
    snowy = truth["true_swe"].max(axis=0) > realism.SNOWY_MM
    assert snowy.sum() >= 4
    published, true = files["swe"][:, snowy], truth["true_swe"][:, snowy]
    assert np.abs(published - true).max() > 10 and 0.1 < figures["swe_relative_error"] < 0.8
    for column in range(snowy.sum()):  # a product that follows the seasons, with its own error
        assert np.corrcoef(published[:, column], true[:, column])[0, 1] > 0.5
    observed = np.isfinite(files["q_mm_d"]) & (truth["true_q_mm_d"] > 0.05)
    log_ratio = np.log(files["q_mm_d"][observed] / truth["true_q_mm_d"][observed])
    assert abs(np.median(log_ratio)) < 0.05 and 0.03 < log_ratio.std() < 0.3  # rating error
