"""The methanewet aligner on the tiny synthetic source and on the real daily and AmeriFlux files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scibench_testing.domains import align_domain, align_with_imagery
from scibench_testing.realdata import REALDATA, requires_realdata

from stages.domains import methanewet
from stages.repository import SourceTables, read_manifest, read_table, write_tables
from stages.sources import fluxnet_ch4 as reader
from stages.synthesize import fluxnet_ch4 as generator
from stages.synthesize.fluxnet_ch4.sites import draw_sites

TINY = generator.Params(n_sites=3, first_year=2018, last_year=2018)


def aligned(raw_dir: Path, work: Path, **params) -> dict[str, pd.DataFrame]:
    """Ingest, write and re-read the source as `align@methanewet` does, align, write the repository."""
    source = work / "source"
    write_tables(source, reader.read(raw_dir, reader.Params(**params)),
                 {"citation": reader.CITATION, "license": reader.LICENSE})
    inputs = {"fluxnet_ch4": SourceTables(source)}
    write_tables(work / "repository", methanewet.align(inputs), {"domain": "methanewet"})
    return {name: read_table(work / "repository", name) for name in ("entities", "timeseries", "halfhourly")}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[dict[str, pd.DataFrame], Path]:
    root = tmp_path_factory.mktemp("methanewet")
    generator.write(root / "raw", TINY)
    return aligned(root / "raw", root), root


def test_entities_carry_metadata_record_length_and_mean_flux(tiny):
    tables, _ = tiny
    entities, daily = tables["entities"], tables["timeseries"]
    truth = {s.site_id: s for s in draw_sites(TINY.seed, TINY.n_sites, TINY.first_year, TINY.last_year)}
    assert methanewet.ENTITY_KEY == "site_id"
    assert entities["site_id"].tolist() == sorted(truth)
    for row in entities.itertuples():
        site = truth[row.site_id]
        assert (row.lat_deg, row.lon_deg) == (site.lat, site.lon)
        assert row.site_classification == site.classification
        assert row.record_days == (site.last_day - site.first_day).astype(int) + 1 == row.n_days
        own = daily[daily["site_id"] == row.site_id]
        assert row.fch4_mean_nmol_m2_s == pytest.approx(own["fch4_nmol_m2_s"].mean(), rel=1e-12)
        assert row.fch4_measured_days == own["fch4_nmol_m2_s"].notna().sum()
        assert row.fch4_f_annoptlm_mean_nmol_m2_s > 0


def test_timeseries_and_halfhourly_keep_the_source_rows_and_units(tiny):
    tables, root = tiny
    source = read_manifest(root / "source")["tables"]
    repository = read_manifest(root / "repository")
    assert repository["tables"]["timeseries"]["rows"] == source["daily"]["rows"] == 365 + 212 + 365
    assert repository["tables"]["halfhourly"]["rows"] == source["halfhourly"]["rows"] == (365 + 212) * 48 + 365 * 24
    assert repository["tables"]["halfhourly"]["keys"] == ["site_id", "timestamp_start"]
    columns = repository["tables"]["halfhourly"]["columns"]
    assert columns["timestamp_start"]["unit"] == "UTC" and columns["fch4_nmol_m2_s"]["unit"] == "nmol/m2/s"
    assert repository["tables"]["entities"]["columns"]["record_days"]["unit"] == "d"
    assert repository["tables"]["timeseries"]["columns"]["fch4_f_annoptlm_qc"]["unit"] == "1"
    hh = tables["halfhourly"]
    assert str(hh["timestamp_start"].dtype).endswith("UTC]")
    assert hh.groupby("site_id")["timestamp_start"].is_monotonic_increasing.all()


@requires_realdata("fluxnet_ch4")
@requires_realdata("ameriflux_base")
def test_real_daily_and_ameriflux_files_align(tmp_path):
    tables = aligned(REALDATA, tmp_path, utc_offsets_h={"US-CRT": -5})
    entities = tables["entities"].set_index("site_id")
    assert entities.index.tolist() == ["BW-Gum", "CA-SCB", "US-CRT", "US-EDN"]
    assert entities["record_days"].tolist() == [365.0, 1417.0, 2.0, 273.0]
    assert entities.loc["US-EDN", "fch4_measured_days"] == 273 - 107
    assert np.isnan(entities.loc["BW-Gum", "wtd_mean_m"]) and entities["lat_deg"].isna().all()
    assert entities.loc["CA-SCB", "wtd_mean_m"] == pytest.approx(-0.158, abs=1e-3)
    assert pd.isna(entities.loc["US-CRT", "fch4_mean_nmol_m2_s"])
    assert entities.loc["US-CRT", "product"] == "AmeriFlux BASE"
    assert len(tables["timeseries"]) == 273 + 365 + 1417 and len(tables["halfhourly"]) == 96


def test_sites_in_the_mosaic_get_image_statistics_and_the_others_nulls(tmp_path):
    _, tables = align_with_imagery("methanewet", "fluxnet_ch4", TINY, tmp_path)
    entities = tables["entities"].set_index("site_id")
    assert entities.index.tolist() == ["BR-Vus", "NL-Vlu", "US-FCN"]
    assert entities.loc[["BR-Vus", "NL-Vlu"], ["relief_mean_m", "ndvi_max"]].isna().all().all()
    us = entities.loc["US-FCN"]
    assert us["relief_mean_m"] > 0 and 0 < us["ndvi_max"] < 1 and us["relief_std_m"] == 0  # one 16 km pixel
    static = tables["image_static"].set_index("site_id")
    assert static["pixel_count"].tolist() == [0, 0, 1] and pd.isna(static.loc["NL-Vlu", "valid_fraction"])
    assert len(tables["image_stats"]) == 3 * 4
    plain = align_domain("methanewet", ["fluxnet_ch4"], tmp_path, name="plain")
    pd.testing.assert_frame_equal(tables["entities"][plain["entities"].columns], plain["entities"])
