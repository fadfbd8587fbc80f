"""The resume store's stagings: a stored query is restored byte for byte, never staged again.

The construct flow's `align` is called with `.fn` in a project folder holding the real
`camels-signature-clustering` task and a tiny repository written as `align@camels` writes one
(three basins x 91 days). Queries `q-mid` (36 days) and `q-long` (40 days) stage; `q-short` (20
days) is discarded at align: its signatures need 30 observed days.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import stat
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flows.construct as construct
from stages.catalog import CatalogTask, load_task
from stages.construction import drawing, resume, staging
from stages.construction.drawing import Discard, Query
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.layout import BENCHMARK, REPOSITORIES, task_dir, verify_run_dir
from stages.repository import MANIFEST, write_tables
from stages.tables import Table

TASK = Path(__file__).resolve().parents[2] / "catalog" / "camels" / "camels-signature-clustering"
START, BASINS = date(2000, 1, 11), ("01", "02")
SHORT = "ValueError: gauge_id 01: fewer than 30 observed days of qobs_mm_d"
ABOUT = {"task_id": "camels-signature-clustering", "scope": "s", "query_id": "q-long", "seconds": 2.5}


def write_repository(folder: Path, seed: int = 5) -> None:
    """Three basins x 91 days (2000-01-01..03-31) of forcing and streamflow, and their attributes."""
    rng = np.random.default_rng(seed)
    dates = pd.date_range("2000-01-01", "2000-03-31")
    n = 3 * len(dates)
    series = pd.DataFrame({"gauge_id": np.repeat(["01", "02", "03"], len(dates)), "date": np.tile(dates, 3),
                           "prcp_mm_d": rng.uniform(0, 5, n), "tmax_c": rng.uniform(5, 20, n),
                           "tmin_c": rng.uniform(-5, 5, n), "qobs_mm_d": rng.uniform(0.5, 3, n)})
    entities = pd.DataFrame({"gauge_id": ["01", "02", "03"], "huc_02": ["01", "01", "03"],
                             "gauge_name": ["A", "B", "C"], "gauge_lat_deg": [44.0, 45.0, 35.0],
                             "gauge_lon_deg": [-70.0, -71.0, -80.0], "elev_mean_m": [300.0, 500.0, 100.0],
                             "area_gages2_km2": [120.0, 80.0, 400.0]})
    write_tables(folder, [
        Table("timeseries", series, ("gauge_id", "date"),
              {"prcp_mm_d": "mm/d", "tmax_c": "degC", "tmin_c": "degC", "qobs_mm_d": "mm/d"}),
        Table("entities", entities, ("gauge_id",),
              {"huc_02": "1", "gauge_name": "1", "gauge_lat_deg": "deg", "gauge_lon_deg": "deg",
               "elev_mean_m": "m", "area_gages2_km2": "km2"})],
        {"kind": "repository", "domain": "camels", "entity_key": "gauge_id"})


def make_query(task: CatalogTask, query_id: str, end: date) -> Query:
    resolved = ResolvedScope("s", "temporal", "two basins", "", "gauge_id", BASINS, START, end)
    return Query(query_id, task.spec.id, task.task_hash, f"scope-{query_id}", "temporal", "", len(BASINS),
                 START, end, render_prompt(task.spec, resolved, query_id), BASINS)


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """The project folder (the working directory, as for the flow) with the tiny camels repository."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(construct, "extract", construct.extract.fn)  # align calls it as a nested task
    write_repository(REPOSITORIES / "camels")
    return tmp_path


@pytest.fixture
def task() -> CatalogTask:
    return load_task(TASK)


@pytest.fixture
def queries(task: CatalogTask) -> list[Query]:
    return [make_query(task, "q-short", date(2000, 1, 30)), make_query(task, "q-mid", date(2000, 2, 15)),
            make_query(task, "q-long", date(2000, 2, 19))]


@pytest.fixture
def staged(monkeypatch) -> list[str]:
    """The query ids `stage_query` is called with (it still stages them)."""
    calls, real = [], staging.stage_query

    def stage_query(task, tables, key, query, *args):
        calls.append(query.query_id)
        return real(task, tables, key, query, *args)

    monkeypatch.setattr(staging, "stage_query", stage_query)
    return calls


def benchmark() -> dict[str, tuple[bytes, int]]:
    """Every file under the benchmark: its bytes and permission bits."""
    return {str(p.relative_to(BENCHMARK)): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
            for p in sorted(BENCHMARK.rglob("*")) if p.is_file()}


def align(task: CatalogTask, queries: list[Query], store: resume.ResumeStore):
    return construct.align.fn(task, "gauge_id", queries, store, fresh=True)


def test_a_stored_staging_is_restored_byte_for_byte_without_extracting_or_staging(project, task, queries,
                                                                                   staged, monkeypatch):
    expected = align(task, queries, resume.ResumeStore(None))
    built = benchmark()
    assert expected == (queries[1:], [Discard(task.spec.id, "scope-q-short", "align", SHORT, "q-short")])
    assert "tasks/camels-signature-clustering/private/q-long/references.json" in built

    store = resume.ResumeStore(project / ".cache" / "construct")
    assert align(task, queries, store) == expected
    assert benchmark() == built and staged == ["q-short", "q-mid", "q-long"] * 2

    def forbidden(*args, **kwargs):
        pytest.fail("a stored query was extracted or staged again")  # a BaseException: not a discard

    monkeypatch.setattr(drawing, "extract_tables", forbidden)
    monkeypatch.setattr(staging, "stage_query", forbidden)
    assert align(task, queries, store) == expected  # the staged queries and the align discard, as stored
    assert benchmark() == built
    assert not list(store.root.rglob("*.tmp"))


def test_a_later_round_restores_into_the_task_folder_it_keeps(project, task, queries, staged, monkeypatch):
    store = resume.ResumeStore(project / "store")
    align(task, queries, store)
    built = benchmark()
    construct.align.fn(task, "gauge_id", queries[:2], resume.ResumeStore(None), fresh=True)  # a new build
    assert construct.align.fn(task, "gauge_id", queries[2:], store, fresh=False) == ([queries[2]], [])
    assert benchmark() == built and staged == ["q-short", "q-mid", "q-long", "q-short", "q-mid"]


def test_a_changed_repository_or_query_is_staged_again(project, task, queries, staged):
    store = resume.ResumeStore(project / "store")
    align(task, queries, store)
    changed = dataclasses.replace(queries[1], prompt=queries[1].prompt + "\n")
    short = Discard(task.spec.id, "scope-q-short", "align", SHORT, "q-short")
    assert align(task, [queries[0], changed, queries[2]], store) == ([changed, queries[2]], [short])  # in order
    assert staged == ["q-short", "q-mid", "q-long", "q-mid"]  # only the changed query

    write_repository(REPOSITORIES / "camels", seed=6)  # other values: a new manifest
    fresh = align(task, queries, store)
    assert staged == ["q-short", "q-mid", "q-long", "q-mid", "q-short", "q-mid", "q-long"]
    restaged = benchmark()
    assert align(task, queries, resume.ResumeStore(None)) == fresh and benchmark() == restaged


def test_without_a_store_every_query_is_staged_each_time(project, task, queries, staged):
    for _ in range(2):
        align(task, queries, resume.ResumeStore(None))
    assert staged == ["q-short", "q-mid", "q-long"] * 2
    assert sorted(p.name for p in project.iterdir()) == ["processed"]


def test_the_staging_key_changes_with_every_input(project, task, queries, monkeypatch):
    repository = REPOSITORIES / "camels"
    query = queries[2]
    before = resume.staging_key(task, repository, query)
    assert resume.staging_key(task, repository, query) == before
    seen = {before}
    for field, value in [("query_id", "q-other"), ("prompt", "other"), ("entities", ("01",)),
                         ("start", date(2000, 1, 12)), ("end", date(2000, 2, 18)), ("scope", "other")]:
        seen.add(resume.staging_key(task, repository, dataclasses.replace(query, **{field: value})))
    copy = project / "catalog" / task.spec.id
    shutil.copytree(TASK, copy)
    (copy / "task.yaml").write_text((TASK / "task.yaml").read_text() + "# a comment\n")
    seen.add(resume.staging_key(dataclasses.replace(task, folder=copy), repository, query))
    manifest = json.loads((repository / MANIFEST).read_text())
    manifest["tables"]["entities"]["sha256"] = "0" * 64
    (repository / MANIFEST).write_text(json.dumps(manifest))
    seen.add(resume.staging_key(task, repository, query))
    monkeypatch.setattr(resume, "harness_hash", lambda: "another harness")
    seen.add(resume.staging_key(task, repository, query))
    assert len(seen) == 10


def folder_with_a_staged_query(root: Path) -> Path:
    folder = task_dir(root, "control-demo")
    (folder / "public" / "q-1").mkdir(parents=True)
    (folder / "public" / "q-1" / "series.parquet").write_bytes(b"PAR1")
    (folder / "public" / "q-1" / "series.parquet").chmod(0o444)
    (folder / "private" / "q-1").mkdir(parents=True)
    (folder / "private" / "q-1" / "truth.parquet").write_bytes(b"truth")
    (verify_run_dir(folder / "private", "q-1")).mkdir()
    (verify_run_dir(folder / "private", "q-1") / "run.json").write_text("{}")
    return folder


def test_a_staging_keeps_both_folders_without_the_verify_run(tmp_path: Path):
    store = resume.ResumeStore(tmp_path / "store")
    built = folder_with_a_staged_query(tmp_path / "built")
    store.put_staging("a" * 32, built, "q-1", None, ABOUT)
    rebuilt = task_dir(tmp_path / "rebuilt", "control-demo")
    assert store.staging("a" * 32, rebuilt, "q-1") == (True, None)
    assert sorted(str(p.relative_to(rebuilt)) for p in rebuilt.rglob("*") if p.is_file()) == [
        "private/q-1/truth.parquet", "public/q-1/series.parquet"]
    assert (rebuilt / "public" / "q-1" / "series.parquet").read_bytes() == b"PAR1"
    assert stat.S_IMODE((rebuilt / "public" / "q-1" / "series.parquet").stat().st_mode) == 0o444
    assert store.staging("b" * 32, rebuilt, "q-1") == (False, None)
    shutil.rmtree(store.root / "aa" / f"{'a' * 32}.staged")  # an entry whose folders were lost
    assert store.staging("a" * 32, tmp_path / "again", "q-1") == (False, None)
    assert not (tmp_path / "again").exists()


@pytest.mark.parametrize("reason", ["MemoryError: ", "OSError: [Errno 28] No space left on device",
                                    "StaleImageryError: raw/imagery/a.tif: SHA-256 differs"])
def test_a_staging_that_failed_for_a_machine_reason_is_not_stored(tmp_path: Path, reason: str):
    store = resume.ResumeStore(tmp_path / "store")
    store.put_staging("a" * 32, tmp_path, "q-1", Discard("control-demo", "s", "align", reason, "q-1"), ABOUT)
    assert store.staging("a" * 32, tmp_path, "q-1") == (False, None)


def test_the_summary_counts_stagings_per_task(tmp_path: Path):
    store = resume.ResumeStore(tmp_path / "store")
    store.put_staging("a" * 32, folder_with_a_staged_query(tmp_path), "q-1", None, ABOUT)
    store.put_staging("b" * 32, tmp_path, "q-2", Discard("control-demo", "s", "align", SHORT, "q-2"),
                      ABOUT | {"seconds": 1.0})
    store.put_label("c" * 32, None, Discard("control-demo", "s", "label", "exited 1", "q-1"), ABOUT)
    assert store.summary() == {"camels-signature-clustering": {
        "staged": 1, "stage_discards": 1, "labelled": 0, "label_discards": 1, "verified": 0,
        "verify_discards": 0, "stage_seconds": 3.5, "seconds": 2.5}}
