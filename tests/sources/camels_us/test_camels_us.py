"""CAMELS-US reader on the real sample files in ../shared/realdata (malformed inputs: test_camels_us_bad_input.py)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from scibench_testing.realdata import REALDATA, requires_realdata

from stages.sources import camels_us
from stages.sources.camels_us import ForcingHeader, Params
from stages.tables import collect

CAMELS = REALDATA / "camels_us"
needs_real = requires_realdata("camels_us")
PRODUCTS = ("daymet", "maurer", "nldas", "maurer_extended")
BASINS = ("01022500", "01547700", "02064000", "03015500")
VARIABLES = ["dayl_s", "prcp_mm_d", "srad_w_m2", "swe_mm", "tmax_c", "tmin_c", "vp_pa"]
FIRST_ROW_01022500 = {  # FORMATS.md section 1.2, verbatim first data rows
    "daymet": [31185.97, 0.00, 189.56, 0.00, -2.36, -14.36, 202.51],
    "maurer": [31185.94, 0.00, 233.66, 0.00, -8.49, -8.49, 192.89],
    "nldas": [31185.94, 0.00, 189.60, 0.00, -6.44, -6.44, 310.74],
    "maurer_extended": [31185.94, 0.0, 233.66, 0.0, -2.09, -14.99, 192.89],
}


# --- real files -----------------------------------------------------------------------------------


@needs_real
@pytest.mark.parametrize("product", PRODUCTS)
@pytest.mark.parametrize("basin", BASINS)
def test_every_real_forcing_file_reads_completely(product, basin):
    frame, header = camels_us.read_forcings(CAMELS, basin, product)
    expected = 1461 if (product, basin) == ("daymet", "01022500") else 1096
    assert len(frame) == expected
    assert list(frame.columns) == ["date", *VARIABLES]
    assert frame["date"].iloc[0] == dt.date(2000, 1, 1)
    assert frame["date"].iloc[-1] == dt.date(2000, 1, 1) + dt.timedelta(days=expected - 1)
    assert (np.diff(frame["date"].to_numpy().astype("datetime64[D]")).astype(int) == 1).all()
    assert not frame[VARIABLES].isna().any().any()
    assert all(frame[v].dtype == "float64" for v in VARIABLES)
    assert header.area_m2 > 0


@needs_real
@pytest.mark.parametrize("product", PRODUCTS)
def test_first_real_row_and_header_are_exact(product):
    frame, header = camels_us.read_forcings(CAMELS, "01022500", product)
    assert header == ForcingHeader(lat_deg=44.82, elev_m=133.0, area_m2=587675987.0)
    assert frame.loc[0, VARIABLES].tolist() == FIRST_ROW_01022500[product]


@needs_real
@pytest.mark.parametrize("product", PRODUCTS)
def test_maurer_and_nldas_repeat_the_daily_mean_as_tmax_and_tmin(product):
    for basin in BASINS:
        frame, _ = camels_us.read_forcings(CAMELS, basin, product)
        same = int((frame["tmax_c"] == frame["tmin_c"]).sum())
        assert same == (len(frame) if product in ("maurer", "nldas") else 0)


@needs_real
def test_real_streamflow_converts_cfs_to_mm_per_day_with_the_header_area():
    flow = camels_us.read_streamflow(CAMELS, "01022500", 587675987.0)
    assert len(flow) == 1096
    first = flow.iloc[0]
    assert first[["date", "qobs_cfs", "qobs_flag"]].tolist() == [dt.date(2000, 1, 1), 255.0, "A:e"]
    assert first["qobs_mm_d"] == pytest.approx(255.0 * 0.0283168 * 86400 / 587675987.0 * 1000)
    assert first["qobs_mm_d"] == pytest.approx(1.0615981449, rel=1e-9)
    assert set(flow["qobs_flag"]) == {"A", "A:e"}
    assert not flow["qobs_mm_d"].isna().any()


@needs_real
def test_real_attributes_keep_ids_as_strings_and_na_as_null():
    attributes = camels_us.read_attributes(CAMELS)
    assert len(attributes) == 671
    assert attributes["gauge_id"].dtype == "string"
    assert attributes["gauge_id"].is_unique and attributes["gauge_id"].is_monotonic_increasing
    row = attributes.set_index("gauge_id").loc["01022500"]
    assert row[["huc_02", "area_gages2_km2", "slope_mean_m_km"]].tolist() == ["01", 573.6, 17.79072]
    assert row["dom_land_cover"] == "Mixed Forests"  # "    Mixed Forests" in the file
    assert row["p_mean_mm_d"] == pytest.approx(3.60812594113621)
    nulls = attributes.isna().sum()
    assert nulls[["geol_2nd_class", "geol_porosity"]].sum() == 141  # camels_geol.txt
    assert nulls[["root_depth_50_m", "root_depth_99_m"]].sum() == 48  # camels_vege.txt
    assert nulls[["q_mean_mm_d", "hfd_mean_d", "zero_q_freq", "q5_mm_d"]].tolist() == [1, 1, 1, 1]
    assert nulls.sum() == 141 + 48 + 12
    renamed = {new for new, _ in camels_us.ATTRIBUTES.values()}
    assert set(attributes.columns) == {"gauge_id", *renamed}
    assert not attributes.select_dtypes("string").apply(lambda c: c.str.startswith(" ").any()).any()


@needs_real
@pytest.mark.parametrize("product", PRODUCTS)
def test_read_yields_sorted_keyed_tables_with_units(product):
    tables = collect(camels_us.read(CAMELS, Params(forcing=product)))
    assert list(tables) == ["daily", "attributes", "quarantine"]
    for table in tables.values():
        frame = table.frame
        assert all(c in table.units for c in frame.columns if c not in table.keys)
        assert not frame.duplicated(list(table.keys)).any()
        assert frame.equals(frame.sort_values(list(table.keys), ignore_index=True))
    forcing, attributes = tables["daily"].frame, tables["attributes"].frame
    assert forcing["gauge_id"].dtype == "string"
    assert sorted(forcing["gauge_id"].unique()) == list(BASINS)
    assert str(forcing["date"].dtype) == "date32[day][pyarrow]"
    assert attributes["header_area_m2"].notna().sum() == 4
    assert attributes.set_index("gauge_id").loc["01022500", "header_lat_deg"] == 44.82
    assert len(tables["quarantine"].frame) == 0


@needs_real
def test_the_attributes_need_the_daily_stream_read_first():
    items = camels_us.read(CAMELS, Params())
    stream = next(items)  # the daily stream, left unread
    with pytest.raises(RuntimeError, match="daily stream must be read to the end before the attributes"):
        next(items)
    with pytest.raises(RuntimeError, match="the daily stream was left unread when the reader moved on"):
        list(stream.chunks)


@needs_real
def test_crlf_line_endings_read_identically(tmp_path):
    for sub in ("basin_mean_forcing/nldas/01", "usgs_streamflow/01"):
        for source in (CAMELS / sub).iterdir():
            target = tmp_path / sub / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes().replace(b"\n", b"\r\n"))
    crlf, crlf_header = camels_us.read_forcings(tmp_path, "01022500", "nldas")
    lf, lf_header = camels_us.read_forcings(CAMELS, "01022500", "nldas")
    pd.testing.assert_frame_equal(crlf, lf)
    assert crlf_header == lf_header
    pd.testing.assert_frame_equal(camels_us.read_streamflow(tmp_path, "01022500", 5e8),
                                  camels_us.read_streamflow(CAMELS, "01022500", 5e8))
