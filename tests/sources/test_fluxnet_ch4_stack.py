"""Stacking per-site FLUXNET-CH4 series: sentinels, absent columns, flags, capacity, site order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from stages.sources.fluxnet_ch4_series import SiteSeries
from stages.sources.fluxnet_ch4_stack import Stacker

TIMES = ("timestamp_start", "timestamp_end")


def series(first: str, values: dict[str, list[float]], units: dict[str, str], utc: bool = True) -> SiteSeries:
    n = len(next(iter(values.values())))
    start = np.datetime64(first, "m") + 30 * np.arange(n)
    columns = {name: pa.chunked_array([pa.array(v[:1], pa.float64()), pa.array(v[1:], pa.float64())])
               for name, v in values.items()}  # two chunks, as the csv reader gives
    flags = frozenset(name for name in values if name.endswith("_qc"))
    return SiteSeries({"timestamp_start": start, "timestamp_end": start + 30}, columns, units, flags, 30, utc)


def test_sites_stack_sorted_with_nulls_for_sentinels_and_absent_columns():
    stacker = Stacker(TIMES)
    stacker.add("US-b", series("2018-01-01T00:00", {"ta_c": [1.5, -9999.0], "fch4_f_annoptlm_qc": [1, 3]},
                               {"ta_c": "degC", "fch4_f_annoptlm_qc": "1"}), 100)
    stacker.add("US-A", series("2018-01-01T01:00", {"p_mm": [0.2], "ta_c": [-9999.0]},
                               {"p_mm": "mm", "ta_c": "degC"}), 100)
    frame = stacker.frame()
    assert frame["site_id"].tolist() == ["US-A", "US-b", "US-b"]  # code order, not insertion order
    assert list(frame.columns) == ["site_id", *TIMES, "p_mm", "ta_c", "fch4_f_annoptlm_qc"]
    assert stacker.units == {"p_mm": "mm", "ta_c": "degC", "fch4_f_annoptlm_qc": "1"}
    assert frame["timestamp_start"].tolist() == [pd.Timestamp("2018-01-01 01:00", tz="UTC"),
                                                 pd.Timestamp("2018-01-01 00:00", tz="UTC"),
                                                 pd.Timestamp("2018-01-01 00:30", tz="UTC")]
    assert frame["p_mm"].tolist()[0] == 0.2 and frame["p_mm"].isna().tolist() == [False, True, True]
    assert frame["ta_c"].isna().tolist() == [True, False, True] and frame["ta_c"].iloc[1] == 1.5
    assert str(frame["fch4_f_annoptlm_qc"].dtype) == "Int8"
    assert frame["fch4_f_annoptlm_qc"].tolist() == [pd.NA, 1, 3]
    assert (frame.dtypes[["p_mm", "ta_c"]] == "float64").all() and str(frame["site_id"].dtype) == "string"


@pytest.mark.parametrize("expected_bytes", [0, 1, 10**9])
def test_capacity_grows_and_is_trimmed_to_the_rows(expected_bytes):
    stacker = Stacker(TIMES, expected_bytes)
    sites = [f"US-{i:03d}" for i in range(5)]
    for i, site in enumerate(sites):
        stacker.add(site, series("2018-01-01T00:00", {"ta_c": [float(i)] * (i + 2)}, {"ta_c": "degC"}), 10)
    frame = stacker.frame()
    assert len(frame) == 2 + 3 + 4 + 5 + 6
    assert frame["ta_c"].tolist() == [float(i) for i in range(5) for _ in range(i + 2)]
    assert frame["timestamp_start"].iloc[-1] == pd.Timestamp("2018-01-01 02:30", tz="UTC")


def test_an_empty_stacker_gives_the_empty_table():
    frame = Stacker(TIMES).frame()
    assert list(frame.columns) == ["site_id", *TIMES] and len(frame) == 0
    assert str(frame["timestamp_start"].dtype) == "datetime64[ns]"


def test_local_time_stays_naive_and_one_site_drops_site_id():
    stacker = Stacker(TIMES)
    stacker.add("", series("2018-06-01T12:00", {"ta_c": [20.0, 21.0]}, {"ta_c": "degC"}, utc=False))
    frame = stacker.frame(with_site_id=False)
    assert list(frame.columns) == [*TIMES, "ta_c"]
    assert frame["timestamp_end"].tolist() == [pd.Timestamp("2018-06-01 12:30"), pd.Timestamp("2018-06-01 13:00")]


def test_declared_columns_fix_the_output_whatever_the_sites_hold():
    declared = {"ta_c": ("degC", False), "p_mm": ("mm", False), "fch4_f_annoptlm_qc": ("1", True)}
    stacker = Stacker(TIMES, rows=2, columns=declared, utc=True)
    stacker.add("US-A", series("2018-01-01T00:00", {"p_mm": [0.5, -9999.0]}, {"p_mm": "mm"}))
    frame = stacker.frame()
    assert list(frame.columns) == ["site_id", *TIMES, "ta_c", "p_mm", "fch4_f_annoptlm_qc"]
    assert frame["ta_c"].isna().all() and frame["fch4_f_annoptlm_qc"].isna().all()
    assert stacker.units == {"ta_c": "degC", "p_mm": "mm", "fch4_f_annoptlm_qc": "1"}
    empty = Stacker(TIMES, columns=declared, utc=True).frame()
    assert list(empty.columns) == list(frame.columns) and len(empty) == 0
    assert (empty.dtypes == frame.dtypes).all()
