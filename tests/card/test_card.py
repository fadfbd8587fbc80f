"""The release card (stages/card) on a hand-made build: exact figures, public files only, valid Croissant."""

from __future__ import annotations

import json
from pathlib import Path

import mlcroissant as mlc
import pandas as pd
import pytest

from stages.card.__main__ import assemble
from stages.card.croissant import croissant, write_validated
from stages.card.datasheet import datasheet
from stages.card.facts import read_facts

CARD = {"name": "bench", "description": "Test tasks.", "version": "1.2.3", "url": None, "license": None,
        "creators": [], "cite_as": None, "date_published": None, "base_url": None}


def _discard(task: str, stage: str, reason: str) -> dict:
    return {"query_id": None, "reason": reason, "scope": "s", "stage": stage, "task_id": task}


@pytest.fixture()
def build(tmp_path: Path) -> Path:
    benchmark, repositories = tmp_path / "benchmark", tmp_path / "repositories"
    queries = pd.DataFrame({"query_id": ["q-1", "q-2", "q-3"], "task_id": ["t-a", "t-a", "t-b"],
                            "task_hash": ["h1", "h1", "h2"], "scope": ["north", "south", "all"],
                            "scope_kind": ["geographic", "geographic", "sample_size"], "n_entities": [3, 4, 9],
                            "start": pd.to_datetime(["2000-01-01"] * 3).date,
                            "end": pd.to_datetime(["2001-12-31"] * 3).date,
                            "split": ["train", "test", "test"], "prompt": ["p1", "p2", "p3"]})
    benchmark.mkdir()
    queries.to_parquet(benchmark / "queries.parquet", index=False)
    for query_id, task_id in zip(queries["query_id"], queries["task_id"], strict=True):
        public = benchmark / "tasks" / task_id / "public" / query_id
        public.mkdir(parents=True)
        (public / "README.md").write_text(f"tables of {query_id}\n")
        pd.DataFrame({"site_id": ["a"], "x": [1.0]}).to_parquet(public / "entities.parquet")
        (benchmark / "tasks" / task_id / "private" / query_id).mkdir(parents=True)
        (benchmark / "tasks" / task_id / "private" / query_id / "truth.parquet").write_text("secret")
    (benchmark / "benchmark.json").write_text(json.dumps({"benchmark_id": "b-123", "data": {"dom": {}}}))
    (benchmark / "verification.json").write_text(json.dumps({"queries_drawn": 7, "queries_verified": 3, "tasks": {
        "t-a": {"queries_drawn": 2, "queries_verified": 2, "discarded": [
            _discard("t-a", "formalize", "query pool is full (2 queries per task)"),
            _discard("t-a", "formalize", "scope selects 2 entities, the task needs 3")]},
        "t-b": {"queries_drawn": 5, "queries_verified": 1, "discarded": [
            _discard("t-b", "verify", "gold misses the task's own targets"),
            _discard("t-b", "verify", "gold misses the task's own targets"),
            _discard("t-b", "verify", "gold misses the task's own targets"),
            _discard("t-b", "label", "annotator script failed")]}}}))
    (repositories / "dom").mkdir(parents=True)
    pd.DataFrame({"site_id": ["a", "b", "a"]}).to_parquet(repositories / "dom" / "entities.parquet")
    (repositories / "dom" / "manifest.json").write_text(json.dumps({"entity_key": "site_id", "sources": {
        "flux": {"citation": None, "license": "no third-party terms", "stands_in_for": "Product (2021)",
                 "provenance": {"origin": "synthetic", "generator": "gen.flux", "seed": 7, "params": {}}}}}))
    catalog = {"tasks": 2, "queries": 3, "tasks_by_domain": {"dom": 2},
               "tasks_by_category_domain": {"forecasting": {"dom": 2}, "clustering": {}},
               "tasks_by_difficulty": {"easy": 1, "hard": 1}, "queries_by_split": {"test": 2, "train": 1},
               "queries_by_domain_split": {"dom": {"test": 2, "train": 1}},
               "queries_by_scope_kind": {"geographic": 2, "sample_size": 1}}
    (tmp_path / "validity.json").write_text(json.dumps({
        "catalog": catalog, "passed": True, "gates": {"oracle_min": 99.0},
        "overall": {"oracle": 100.0, "nodata": 0.0}}))
    return tmp_path


def test_the_release_holds_exactly_the_public_files(build: Path):
    release = build / "release"
    assert assemble(build / "benchmark", release) == 7
    shipped = sorted(str(p.relative_to(release)) for p in release.rglob("*") if p.is_file())
    assert shipped == ["queries.parquet"] + [f"workspaces/q-{i}/{name}" for i in (1, 2, 3)
                                             for name in ("README.md", "entities.parquet")]


def test_the_facts_count_discards_by_stage_and_name_the_tasks_that_kept_few(build: Path):
    facts = read_facts(build / "benchmark", build / "repositories", build / "validity.json", "tiny")
    assert facts.discards_by_stage == {"formalize": 1, "label": 1, "verify": 3}  # a full pool is no discard
    assert facts.low_keep == [("t-b", 1, 5)]
    assert facts.entities == {"dom": 2}
    sources = [(s.name, s.origin, s.generator, s.seed) for s in facts.sources["dom"]]
    assert sources == [("flux", "synthetic", "gen.flux", 7)]


def test_the_croissant_file_validates_and_reads_the_queries(build: Path):
    release = build / "release"
    assemble(build / "benchmark", release)
    facts = read_facts(build / "benchmark", build / "repositories", build / "validity.json", "tiny")
    warnings = write_validated(croissant(facts, CARD, release), release / "croissant.json")
    assert len(warnings) == 3 and all("recommended" in w for w in warnings)  # license, citeAs, datePublished
    records = list(mlc.Dataset(jsonld=release / "croissant.json").records("queries"))
    assert [(r["queries/query_id"], r["queries/n_entities"], r["queries/split"]) for r in records] == [
        (b"q-1", 3, b"train"), (b"q-2", 4, b"test"), (b"q-3", 9, b"test")]
    document = json.loads((release / "croissant.json").read_text())
    assert document["rai:dataAnnotationAnalysis"][1] == (
        "tasks that kept less than 50% of their drawn queries: t-b 1 of 5")
    assert "synthetic, generated by gen.flux (seed 7); imitates: Product (2021)" in document["rai:dataCollection"]
    assert document["version"] == "1.2.3"


def test_a_chosen_license_silences_its_warning_and_reaches_the_datasheet(build: Path):
    release = build / "release"
    assemble(build / "benchmark", release)
    facts = read_facts(build / "benchmark", build / "repositories", build / "validity.json", "tiny")
    card = CARD | {"license": "https://creativecommons.org/licenses/by/4.0/"}
    warnings = write_validated(croissant(facts, card, release), release / "croissant.json")
    assert not any("license" in w for w in warnings)
    sheet = datasheet(facts, card)
    assert "License: https://creativecommons.org/licenses/by/4.0/." in sheet
    assert "| forecasting | 2 | 2 |" in sheet and "clustering" not in sheet
    assert "7 queries drawn from the tasks' scopes and 3 kept; discarded: 1 at label, 3 at verify; 1 listed" in sheet
