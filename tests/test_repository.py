from pathlib import Path

import pandas as pd
import pytest

from stages.repository import (
    RepositoryError,
    read_manifest,
    read_table,
    sort_table,
    verify_hashes,
    write_tables,
)
from stages.tables import Table


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
