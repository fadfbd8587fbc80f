"""The streamed `halfhourly` table: row-group batches that add up to the whole table."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from stages.repository import read_table, write_tables
from stages.sources import fluxnet_ch4
from stages.sources.fluxnet_ch4 import Params
from stages.sources.fluxnet_ch4 import assemble as stream
from stages.sources.fluxnet_ch4 import scan as series
from stages.synthesize import fluxnet_ch4 as generator
from stages.tables import StreamedTables, collect

ROWS = 365 * 24 + 212 * 48 + 365 * 48  # BR-Vus (hourly), NL-Vlu (212 days), US-FCN: 2018 (seed 42, 3 sites)


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
    batches = [chunk["halfhourly"] for chunk in halfhourly(raw, Params()).chunks]
    assert [batch.num_rows for batch in batches] == [10_000] * 3 + [ROWS - 30_000]
    manifest = write_tables(tmp_path, [halfhourly(raw, Params())], {})
    assert manifest["tables"]["halfhourly"]["rows"] == ROWS
    meta = pq.ParquetFile(tmp_path / "halfhourly.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [10_000] * 3 + [ROWS - 30_000]
    pd.testing.assert_frame_equal(read_table(tmp_path, "halfhourly"), whole)
    assert whole["site_id"].unique().tolist() == ["BR-Vus", "NL-Vlu", "US-FCN"]


def test_the_stream_declares_its_table_and_collects_whole(raw):
    item = halfhourly(raw, Params(time_reference="local_standard"))
    table = item.streams[0]
    assert (table.name, table.keys) == ("halfhourly", ("site_id", "timestamp_start"))
    assert table.units["timestamp_start"] == "local standard time" and table.units["fch4_nmol_m2_s"] == "nmol/m2/s"
    frame = as_frame(item)
    assert len(frame) == ROWS and list(frame.columns) == list(table.template.columns)
    assert str(frame["timestamp_start"].dtype) == "datetime64[ns]" and str(frame["fch4_f_annoptlm_qc"].dtype) == "Int8"


def test_the_tables_after_the_stream_are_whole_however_much_of_it_was_read(raw):
    whole = collect(fluxnet_ch4.read(raw, Params()))
    for taken in (0, 1):
        tables = fluxnet_ch4.read(raw, Params())
        stream_item = next(tables)
        for _, _ in zip(range(taken), stream_item.chunks, strict=False):
            pass  # a consumer that leaves the stream early
        rest = collect(tables)
        assert list(rest) == ["daily", "sites", "quarantine"]
        for name, table in rest.items():
            pd.testing.assert_frame_equal(table.frame, whole[name].frame)


def test_a_stream_left_unread_cannot_be_read_later(raw, tmp_path):
    items = list(fluxnet_ch4.read(raw, Params()))  # the reader went on past the stream
    with pytest.raises(RuntimeError, match="halfhourly stream was left unread when the reader moved on"):
        write_tables(tmp_path, items, {})
    assert not list(tmp_path.glob("*.parquet*"))
    item = halfhourly(raw, Params())
    collect([item])
    with pytest.raises(RuntimeError, match="halfhourly stream was already read"):
        collect([item])


def test_each_file_is_parsed_once(raw, monkeypatch):
    parsed = []
    read_file = series.read_subdaily_file

    def counting(found, *args):
        parsed.append(found.path.name)
        return read_file(found, *args)

    monkeypatch.setattr(series, "read_subdaily_file", counting)
    collect(fluxnet_ch4.read(raw, Params()))
    assert sorted(parsed) == sorted(path.name for path in raw.glob("**/*_HH_*.csv")) and len(parsed) == 3


def test_a_file_quarantined_for_a_bad_row_keeps_its_columns_empty(raw, tmp_path):
    shutil.copytree(raw, tmp_path, dirs_exist_ok=True)
    path = next(tmp_path.glob("**/FLX_US-FCN_*_HH_*.csv"))
    lines = path.read_text().splitlines()
    header = lines[0] + ",XYZ_NEW"
    path.write_text("\n".join([header, *(line + ",1.0" for line in lines[1:4]), lines[4] + ",junk"]) + "\n")
    tables = collect(fluxnet_ch4.read(tmp_path, Params(on_error="quarantine")))
    assert tables["quarantine"].frame[["file", "line"]].values.tolist() == [[str(path), 5]]
    frame = tables["halfhourly"].frame
    assert frame["site_id"].unique().tolist() == ["BR-Vus", "NL-Vlu"]
    assert frame["xyz_new"].isna().all() and tables["halfhourly"].units["xyz_new"] == "unknown"
