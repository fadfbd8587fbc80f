"""The `control` aligner: series catalogue -> entities, daily values -> timeseries."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stages.domains import control as domain
from stages.repository import SourceTables, validate_table, write_tables
from stages.sources import control as source
from stages.synthesize import control as synthesize

ENTITY_COLUMNS = ["series_id", "family", "region", "a1", "a2", "a3", "component", "driver"]


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("raw")
    synthesize.write(root, synthesize.Params(n_series=12, first_year=2000, last_year=2001))
    return root


def aligned(raw_dir: Path, folder: Path, **params) -> dict[str, domain.Table]:
    """What `stages.align.align` hands the aligner, aligned and validated."""
    write_tables(folder, list(source.read(raw_dir, source.Params(**params))), {})
    tables = {t.name: t for t in domain.align({"control": SourceTables(folder)})}
    for table in tables.values():
        validate_table(table)
    return tables


def test_entities_and_timeseries_carry_every_series(raw, tmp_path):
    tables = aligned(raw, tmp_path)
    assert list(tables) == ["entities", "timeseries"]
    entities, timeseries = tables["entities"], tables["timeseries"]
    assert list(entities.frame.columns) == ENTITY_COLUMNS and entities.keys == ("series_id",)
    assert list(timeseries.frame.columns) == ["series_id", "date", "y", "x1", "x2", "x3", "x4", "x5"]
    assert timeseries.keys == ("series_id", "date") and len(timeseries.frame) == 12 * 731
    assert entities.frame["family"].value_counts().to_dict() == {"mixture": 4, "ar": 3, "linear": 3, "noise": 2}
    assert entities.units == dict.fromkeys(ENTITY_COLUMNS[1:], "1")
    written = pd.read_csv(raw / "series.csv", dtype={"component": "Int64"})
    assert entities.frame["component"].tolist() == written["component"].tolist()


def test_series_whose_file_was_quarantined_leave_the_entities(raw, tmp_path):
    broken = tmp_path / "raw"
    broken.mkdir()
    for path in raw.iterdir():
        (broken / path.name).write_bytes(path.read_bytes())
    (broken / "ar.csv").write_text("series_id;date\n")
    tables = aligned(broken, tmp_path / "out", on_error="quarantine")
    assert "ar" not in set(tables["entities"].frame["family"])
    assert set(tables["timeseries"].frame["series_id"]) == set(tables["entities"].frame["series_id"])
