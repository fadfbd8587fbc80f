import hashlib
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stages.repository import (
    RepositoryError,
    SourceTables,
    read_manifest,
    read_table,
    sort_table,
    verify_hashes,
    write_tables,
)
from stages.tables import StreamedTables, Table, TableStream


def entities(ids=("b", "a")) -> Table:
    frame = pd.DataFrame({"gauge_id": list(ids), "area_km2": [2.0, 1.0][: len(ids)]})
    return Table("entities", frame, keys=("gauge_id",), units={"area_km2": "km2"})


def test_written_tables_round_trip_with_units_and_hashes(tmp_path: Path):
    manifest = write_tables(tmp_path, [sort_table(entities())], {"domain": "x"})
    assert manifest["domain"] == "x"
    assert manifest["tables"]["entities"]["rows"] == 2
    assert manifest["tables"]["entities"]["columns"]["area_km2"]["unit"] == "km2"
    assert read_manifest(tmp_path) == manifest
    assert read_table(tmp_path, "entities")["gauge_id"].tolist() == ["a", "b"]
    verify_hashes(tmp_path)


def test_only_text_columns_are_dictionary_encoded(tmp_path: Path):
    frame = pd.DataFrame({"gauge_id": pd.array(["a", "a", "b"], dtype="string"), "day": [1, 2, 1],
                          "q_mm": [0.5, 0.5, 0.5]})
    write_tables(tmp_path, [Table("daily", frame, ("gauge_id", "day"), {"q_mm": "mm/d"})], {})
    group = pq.ParquetFile(tmp_path / "daily.parquet").metadata.row_group(0)
    encodings = {group.column(i).path_in_schema: group.column(i).encodings for i in range(group.num_columns)}
    assert "RLE_DICTIONARY" in encodings["gauge_id"]
    assert not any("DICTIONARY" in e for column in ("day", "q_mm") for e in encodings[column])


def test_writing_twice_gives_identical_bytes(tmp_path: Path):
    write_tables(tmp_path / "one", [sort_table(entities())], {})
    write_tables(tmp_path / "two", [sort_table(entities())], {})
    for name in ("entities.parquet", "manifest.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_unsorted_keys_are_rejected(tmp_path: Path):
    with pytest.raises(RepositoryError, match=r"table entities: rows are not sorted by \('gauge_id',\)"):
        write_tables(tmp_path, [entities()], {})


def test_duplicated_keys_are_rejected(tmp_path: Path):
    with pytest.raises(RepositoryError, match=r"duplicated key \['a'\]"):
        write_tables(tmp_path, [sort_table(entities(("a", "a")))], {})


def test_a_column_without_unit_is_rejected(tmp_path: Path):
    table = Table("t", pd.DataFrame({"k": [1], "v": [2]}), keys=("k",), units={})
    with pytest.raises(RepositoryError, match=r"columns without a unit: \['v'\]"):
        write_tables(tmp_path, [table], {})


def test_a_column_that_is_not_snake_case_is_rejected(tmp_path: Path):
    table = Table("t", pd.DataFrame({"k": [1], "QObs(mm/d)": [2]}), keys=("k",), units={})
    with pytest.raises(RepositoryError, match=r"column 'QObs\(mm/d\)' is not snake_case"):
        write_tables(tmp_path, [table], {})


def test_a_tampered_file_fails_the_hash_check(tmp_path: Path):
    write_tables(tmp_path, [sort_table(entities())], {})
    write_tables(tmp_path / "other", [sort_table(entities(("c", "d")))], {})
    (tmp_path / "entities.parquet").write_bytes((tmp_path / "other/entities.parquet").read_bytes())
    with pytest.raises(RepositoryError, match="content hash differs from manifest"):
        verify_hashes(tmp_path)


# --- streamed tables: batches validated one after the other, a row group each ---------------------


def series_stream(*batches: list[tuple[str, int]]) -> StreamedTables:
    template = pd.DataFrame({"site": pd.array([], dtype="string"), "day": pd.array([], dtype="int64"),
                             "flux": pd.array([], dtype="float64")})
    stream = TableStream("series", template, keys=("site", "day"), units={"flux": "nmol/m2/s"})
    chunks = [{"series": pa.table({"site": [s for s, _ in rows], "day": [d for _, d in rows],
                                   "flux": [float(d) for _, d in rows]})} for rows in batches]
    return StreamedTables((stream,), chunks)


def test_a_stream_is_written_a_row_group_per_batch_with_the_template_dtypes(tmp_path: Path):
    manifest = write_tables(tmp_path, [series_stream([("a", 1), ("a", 2)], [("b", 1)])], {})
    entry = manifest["tables"]["series"]
    assert entry["rows"] == 3
    assert {c: e["dtype"] for c, e in entry["columns"].items()} == {"site": "string", "day": "int64",
                                                                   "flux": "float64"}
    assert pq.ParquetFile(tmp_path / "series.parquet").num_row_groups == 2
    frame = read_table(tmp_path, "series")
    assert frame["site"].dtype == "string" and frame["day"].tolist() == [1, 2, 1]
    verify_hashes(tmp_path)


def test_streams_are_checked_across_batch_boundaries_and_leave_nothing_behind(tmp_path: Path):
    with pytest.raises(RepositoryError, match=r"table series: rows are not sorted by \('site', 'day'\)"):
        write_tables(tmp_path, [series_stream([("a", 1), ("b", 2)], [("a", 3)])], {})
    with pytest.raises(RepositoryError, match=r"table series: duplicated key \['b', 2\]"):
        write_tables(tmp_path, [series_stream([("a", 1), ("b", 2)], [("b", 2)])], {})
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_stream_writes_the_same_bytes_twice(tmp_path: Path):
    for name in ("one", "two"):
        write_tables(tmp_path / name, [series_stream([("a", 1)], [("a", 2), ("b", 1)])], {})
    assert (tmp_path / "one/series.parquet").read_bytes() == (tmp_path / "two/series.parquet").read_bytes()


def test_a_failed_write_leaves_no_manifest_of_an_earlier_run(tmp_path: Path):
    write_tables(tmp_path, [sort_table(entities())], {})
    with pytest.raises(RepositoryError, match="duplicated key"):
        write_tables(tmp_path, [sort_table(entities(("a", "a")))], {})
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_copied_table_keeps_its_bytes_when_its_source_is_written_again(tmp_path):
    # The copy may be a hard link: the source folder's next write must replace, not overwrite, its files.
    def source(value: float) -> dict:
        frame = pd.DataFrame({"k": pd.array(["a", "b"], dtype="string"), "v": [value, 2.0]})
        return write_tables(tmp_path / "source", [Table("t", frame, keys=("k",), units={"v": "m"})], {"kind": "source"})

    source(1.0)
    copied = write_tables(tmp_path / "copy", [SourceTables(tmp_path / "source").copy("t", "u")], {"kind": "copy"})
    before = (tmp_path / "copy" / "u.parquet").read_bytes()
    source(5.0)
    assert (tmp_path / "copy" / "u.parquet").read_bytes() == before
    assert hashlib.sha256(before).hexdigest() == copied["tables"]["u"]["sha256"]
    assert read_table(tmp_path / "copy", "u")["v"].tolist() == [1.0, 2.0]
