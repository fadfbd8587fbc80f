"""Assembling checked FLUXNET-CH4 files: sentinels and non-finite values as nulls, absent columns, flags,
time order, site order, row groups."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from stages.sources.fluxnet_ch4 import assemble
from stages.sources.fluxnet_ch4.columns import describe
from stages.sources.fluxnet_ch4.parse import Header, RawCsv

TIMES = ("timestamp_start", "timestamp_end")


def series(first: str, values: dict[str, list[float]], utc: bool = True, order: list[int] | None = None):
    """A checked sub-daily file of raw `values` (raw names), 30-min rows from `first` (permuted by `order`)."""
    n = len(next(iter(values.values())))
    start = np.datetime64(first, "m") + 30 * np.arange(n)
    start = start if order is None else start[order]
    columns = {name: pa.chunked_array([pa.array(v[:1], pa.float64()), pa.array(v[1:], pa.float64())])
               for name, v in values.items()}  # two chunks, as the csv reader gives
    raw = RawCsv(Path("f.csv"), Header(1, ("TIMESTAMP_START", "TIMESTAMP_END", *values)), {}, columns, {})
    variables = [describe(name) for name in values]
    return assemble.site_series(raw, {"timestamp_start": start, "timestamp_end": start + 30}, variables, 30, utc)


def test_sites_stack_sorted_with_nulls_for_sentinels_non_finite_values_and_absent_columns():
    b = series("2018-01-01T00:00", {"TA": [1.5, -9999.0], "FCH4_F_ANNOPTLM_QC": [1, 3]})
    a = series("2018-01-01T01:00", {"P": [0.2], "TA": [float("nan")]})
    frame, units = assemble.stack([("US-b", b), ("US-A", a)], TIMES, utc=True)
    assert frame["site_id"].tolist() == ["US-A", "US-b", "US-b"]  # code order, not the order given
    assert list(frame.columns) == ["site_id", *TIMES, "p_mm", "ta_c", "fch4_f_annoptlm_qc"]
    assert units == {"p_mm": "mm", "ta_c": "degC", "fch4_f_annoptlm_qc": "1"}
    assert frame["timestamp_start"].tolist() == [pd.Timestamp("2018-01-01 01:00", tz="UTC"),
                                                 pd.Timestamp("2018-01-01 00:00", tz="UTC"),
                                                 pd.Timestamp("2018-01-01 00:30", tz="UTC")]
    assert frame["p_mm"].tolist()[0] == 0.2 and frame["p_mm"].isna().tolist() == [False, True, True]
    assert frame["ta_c"].isna().tolist() == [True, False, True] and frame["ta_c"].iloc[1] == 1.5
    assert str(frame["fch4_f_annoptlm_qc"].dtype) == "Int8"
    assert frame["fch4_f_annoptlm_qc"].tolist() == [pd.NA, 1, 3]
    assert (frame.dtypes[["p_mm", "ta_c"]] == "float64").all() and str(frame["site_id"].dtype) == "string"


def test_rows_come_out_in_time_order_with_their_values():
    one = series("2018-01-01T00:00", {"TA": [3.0, 1.0, 2.0]}, order=[2, 0, 1])
    frame, _ = assemble.stack([("US-A", one)], TIMES, utc=True)
    assert frame["ta_c"].tolist() == [1.0, 2.0, 3.0]
    assert frame["timestamp_start"].is_monotonic_increasing
    assert one.spans["timestamp_start"] == (np.datetime64("2018-01-01T00:00"), np.datetime64("2018-01-01T01:00"))


def test_an_empty_stack_gives_the_empty_table():
    frame, units = assemble.stack([], TIMES, utc=False)
    assert list(frame.columns) == ["site_id", *TIMES] and len(frame) == 0 and units == {}
    assert str(frame["timestamp_start"].dtype) == "datetime64[ns]"


def test_local_time_stays_naive_and_one_site_drops_site_id():
    one = series("2018-06-01T12:00", {"TA": [20.0, 21.0]}, utc=False)
    frame, _ = assemble.stack([("", one)], TIMES, utc=False, with_site_id=False)
    assert list(frame.columns) == [*TIMES, "ta_c"]
    assert frame["timestamp_end"].tolist() == [pd.Timestamp("2018-06-01 12:30"), pd.Timestamp("2018-06-01 13:00")]


def test_declared_columns_fix_the_output_whatever_the_site_holds():
    declared = {"ta_c": ("degC", False), "p_mm": ("mm", False), "fch4_f_annoptlm_qc": ("1", True)}
    table = assemble.site_table("US-A", series("2018-01-01T00:00", {"P": [0.5, -9999.0]}), declared)
    assert table.column_names == ["site_id", *TIMES, "ta_c", "p_mm", "fch4_f_annoptlm_qc"]
    assert table.column("ta_c").null_count == 2 and table.column("fch4_f_annoptlm_qc").null_count == 2
    assert table.column("p_mm").to_pylist() == [0.5, None]
    empty = assemble.empty_table(TIMES, declared, utc=True)
    assert empty.schema == table.schema and empty.num_rows == 0


def test_row_groups_cut_across_tables_and_add_up(monkeypatch):
    monkeypatch.setattr(assemble, "ROW_GROUP_ROWS", 4)
    tables = [pa.table({"x": list(range(start, start + n))}) for start, n in ((0, 3), (3, 6), (9, 1))]
    groups = list(assemble.row_groups(tables))
    assert [g.num_rows for g in groups] == [4, 4, 2]
    assert [g.column("x").to_pylist() for g in groups] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
