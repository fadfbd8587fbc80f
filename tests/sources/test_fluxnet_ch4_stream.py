"""The streamed `halfhourly` table: row-group batches that add up to the whole table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from stages.repository import read_table, write_tables
from stages.sources import fluxnet_ch4
from stages.sources import fluxnet_ch4_stream as stream
from stages.sources.fluxnet_ch4 import Params
from stages.synthesize import fluxnet_ch4 as generator
from stages.tables import StreamedTables, collect

ROWS = 17520 + 8760 + 17520  # DE-VqS, MY-UzR (hourly), US-SFC: 2018 (seed 42, 3 sites)


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fluxnet")
    generator.write(root, generator.Params(n_sites=3, first_year=2018, last_year=2018))
    return root


def halfhourly(raw: Path, params: Params) -> StreamedTables:
    return next(t for t in fluxnet_ch4.read(raw, params) if isinstance(t, StreamedTables))


def as_frame(item: StreamedTables) -> pd.DataFrame:
    return collect([item])["halfhourly"].frame


def test_small_row_groups_cut_sites_and_add_up_to_the_whole_table(raw, tmp_path, monkeypatch):
    whole = as_frame(halfhourly(raw, Params()))
    monkeypatch.setattr(stream, "ROW_GROUP_ROWS", 10_000)
    item = halfhourly(raw, Params())
    first = [chunk["halfhourly"] for chunk in item.chunks]  # the kept first batch, then re-read ones
    again = [chunk["halfhourly"] for chunk in item.chunks]  # every batch re-read
    assert [batch.num_rows for batch in first] == [10_000] * 4 + [ROWS - 40_000]
    assert all(a.equals(b) for a, b in zip(first, again, strict=True))
    manifest = write_tables(tmp_path, [item], {})
    assert manifest["tables"]["halfhourly"]["rows"] == ROWS
    meta = pq.ParquetFile(tmp_path / "halfhourly.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [10_000] * 4 + [3_800]
    pd.testing.assert_frame_equal(read_table(tmp_path, "halfhourly"), whole)
    assert whole["site_id"].unique().tolist() == ["DE-VqS", "MY-UzR", "US-SFC"]


def test_the_stream_declares_its_table_and_collects_whole(raw):
    item = halfhourly(raw, Params(time_reference="local_standard"))
    table = item.streams[0]
    assert (table.name, table.keys) == ("halfhourly", ("site_id", "timestamp_start"))
    assert table.units["timestamp_start"] == "local standard time" and table.units["fch4_nmol_m2_s"] == "nmol/m2/s"
    frame = as_frame(item)
    assert len(frame) == ROWS and list(frame.columns) == list(table.template.columns)
    assert str(frame["timestamp_start"].dtype) == "datetime64[ns]" and str(frame["fch4_f_annoptlm_qc"].dtype) == "Int8"
    pd.testing.assert_frame_equal(as_frame(item), frame)  # the chunks can be read again
