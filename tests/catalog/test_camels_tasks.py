"""The `camels` catalog: every task loads, stages, runs and is graded by the harness.

Two parts (the known-answer fixtures of every annotator script are in test_camels_known_answers.py):

- The catalog as data: five tasks, their scopes, prompts and staged columns.
- End to end on a tiny synthetic repository (8 basins, 2000-2003, written by the project's synthesizer
  and read by its `camels_us` reader through ingest and align): per task one query is staged by the
  production code (`stages.construction.staging.stage_query`), a workspace is made from its public files
  (`stages.sandbox.workspace.make_workspace`), the task's `reproduce.py` runs there like an agent, twice, and
  what it hands in is graded by the harness (`read_artifact`, `recompute`) against the query's
  hidden truth. The query's scope is a random sample of basins over 2000-2002, so the staged files
  can be checked for basins and days outside it.
"""

from __future__ import annotations

import importlib.util
import json
import math
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scibench_testing.annotators import (
    ANNOTATOR_PATH,
    CATALOG,
    KEY,
    artifact_block,
    grade,
    read_series,
    run_reproduce,
)
from scibench_testing.domains import synthesize_and_ingest

from stages.align import align
from stages.catalog import CatalogTask, load_catalog, load_scopes
from stages.catalog_scopes import ScopeSpec
from stages.construction.drawing import Query, extract_tables
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope, ScopeUnavailable, resolve_scope
from stages.construction.staging import stage_query, stage_task
from stages.repository import read_manifest, read_table
from stages.sandbox.workspace import make_workspace
from stages.scoring.query.artifacts import read_artifact
from stages.scoring.query.signatures import SIGNATURE_DEFINITIONS, basin_signatures
from stages.synthesize import camels_us as camels_synth

TASK_IDS = [
    "camels-aridity-runoff",
    "camels-gap-filling",
    "camels-model-comparison",
    "camels-signature-clustering",
    "camels-streamflow-prediction",
]
HOLDOUT_TASKS = ["camels-model-comparison", "camels-streamflow-prediction"]
# Attributes derived from observed streamflow (camels_hydro): staging any would leak answers.
STREAMFLOW_SIGNATURES = {
    "q_mean_mm_d",
    "runoff_ratio",
    "slope_fdc",
    "baseflow_index",
    "stream_elas",
    "q5_mm_d",
    "q95_mm_d",
    "high_q_freq_d_yr",
    "high_q_dur_d",
    "low_q_freq_d_yr",
    "low_q_dur_d",
    "zero_q_freq",
    "hfd_mean_d",
}
REPOSITORY_YEARS = (2000, 2003)
SMOKE_YEARS = (2000, 2002)  # ends a year before the repository: staging must cut the last year


# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny aligned camels repository (8 synthetic basins, 2000-2003), built as ingest/align do."""
    root = tmp_path_factory.mktemp("camels")
    params = camels_synth.Params(n_basins=8, first_year=REPOSITORY_YEARS[0], last_year=REPOSITORY_YEARS[1])
    synthesize_and_ingest("camels_us", params, root)
    align("camels", ["camels_us"], root / "sources", root / "repository")
    return root / "repository"


@dataclass(frozen=True)
class Staged:
    """One query of a task staged into a task folder by `stages.construction.staging.stage_query`."""

    query: Query
    public: Path
    private: Path

    @property
    def truth(self) -> pd.DataFrame:
        return pd.read_parquet(self.private / "truth.parquet")

    @property
    def required(self) -> pd.DataFrame:
        return pd.read_parquet(self.private / "required.parquet")


def smoke_scope(task: CatalogTask, repository: Path) -> ResolvedScope:
    """A random sample of the task's minimum number of basins (at least 3) over 2000-2002."""
    size = max(task.spec.min_entities, 3)
    spec = ScopeSpec(name=f"sample_{size}_seed1_2000_2002", kind="sample_size",
                     description=f"{size} basins drawn at random, 2000-2002", years=SMOKE_YEARS,
                     sample=size, seed=1)
    dates = pd.to_datetime(read_table(repository, "timeseries", ["date"])["date"])
    return resolve_scope(spec, read_table(repository, "entities"), KEY, dates.min().date(),
                         dates.max().date(), task.spec.min_entities, task.spec.min_years)


@pytest.fixture(scope="module")
def staged(tasks, repository, tmp_path_factory) -> dict[str, Staged]:
    """Per task, one query staged like `flows.construct.align` does (the query built like `draw_queries`)."""
    root = tmp_path_factory.mktemp("benchmark")
    key = read_manifest(repository)["entity_key"]
    out = {}
    for task_id, task in tasks.items():
        scope = smoke_scope(task, repository)
        query = Query(task.query_id(scope.block()), task_id, task.task_hash,
                      scope.name, scope.kind, scope.citation, len(scope.entities), scope.start,
                      scope.end, render_prompt(task.spec, scope), scope.entities)
        task_dir = root / task_id
        stage_task(task, task_dir)
        public = stage_query(task, extract_tables(task, repository), key, query, task_dir)
        out[task_id] = Staged(query, public, task_dir / "private" / query.query_id)
    return out


# --- the catalog as data --------------------------------------------------------------------------


def test_the_camels_catalog_holds_the_five_tasks(tasks):
    assert sorted(tasks) == TASK_IDS
    for task in tasks.values():
        assert task.spec.domain == "camels"
        assert task.spec.data.repository == "camels"
        assert task.spec.modalities == ["timeseries", "tabular"]
        assert task.spec.source.doi


def test_every_scope_is_used_and_every_task_has_about_twenty_six(tasks):
    library = load_scopes(CATALOG / "camels")
    used = {name for task in load_catalog(CATALOG, ["camels"]) for name in task.spec.scopes}
    assert used == set(library)
    for task in tasks.values():
        assert 26 <= len(task.spec.scopes) <= 31, task.spec.id  # 20 kept at `full`, the rest replace discards
        assert len(set(task.spec.scopes)) == len(task.spec.scopes), task.spec.id


def test_prompts_fill_every_placeholder_and_never_name_the_source(tasks):
    scope = ResolvedScope("s", "temporal", "all basins", "", KEY, ("01000001",), date(2000, 1, 1),
                          date(2002, 12, 31))
    for task in tasks.values():
        prompt = render_prompt(task.spec, scope)
        assert "$" not in prompt, task.spec.id
        assert "work/answer.json" in prompt
        assert task.spec.source.doi not in prompt
        assert task.spec.source.citation.split(",")[0] not in prompt
        if task.spec.artifact is not None:
            assert artifact_block(prompt)["file"] == task.spec.artifact.file


def test_no_task_stages_a_streamflow_signature(tasks):
    for task in tasks.values():
        staged = {column for columns in task.spec.data.tables.values() for column in columns}
        assert not staged & STREAMFLOW_SIGNATURES, task.spec.id


def test_metric_names_truths_artifacts_and_references(tasks):
    specs = {task_id: tasks[task_id].spec for task_id in TASK_IDS}
    assert {t: [m.name for m in s.answer.metrics or []] for t, s in specs.items()} == {
        "camels-aridity-runoff": [],
        "camels-gap-filling": ["rmse_mm_d", "nse_masked"],
        "camels-model-comparison": ["median_nse_linear", "median_nse_forest"],
        "camels-signature-clustering": ["silhouette"],
        "camels-streamflow-prediction": ["nse", "kge"],
    }
    assert {t: s.truth.kind if s.truth else None for t, s in specs.items()} == {
        "camels-aridity-runoff": None,
        "camels-gap-filling": "hidden_gaps",
        "camels-model-comparison": "holdout",
        "camels-signature-clustering": "signatures",
        "camels-streamflow-prediction": "holdout",
    }
    assert {t: s.artifact.file if s.artifact else None for t, s in specs.items()} == {
        "camels-aridity-runoff": None,
        "camels-gap-filling": "filled.parquet",
        "camels-model-comparison": "predictions.parquet",
        "camels-signature-clustering": "clusters.parquet",
        "camels-streamflow-prediction": "predictions.parquet",
    }
    for spec in specs.values():
        for metric in spec.answer.metrics or []:
            assert metric.grade is not None and metric.references, (spec.id, metric.name)
    aridity = specs["camels-aridity-runoff"].answer.hypothesis
    assert aridity.format == "number"
    assert aridity.bootstrap is not None


def test_the_clustering_prompt_states_the_harness_signature_definitions(tasks):
    prompt = " ".join(tasks["camels-signature-clustering"].spec.prompt.split())
    for name in SIGNATURE_DEFINITIONS:
        assert f"`{name}`" in prompt
    assert "alpha = 0.925" in prompt and "9 times the median" in prompt
    assert "population standard deviation" in prompt


# --- against a tiny synthetic repository ----------------------------------------------------------


def test_staged_columns_exist_in_the_repository(tasks, repository):
    manifest = read_manifest(repository)
    for task in tasks.values():
        for table, columns in task.spec.data.tables.items():
            missing = set(columns) - set(manifest["tables"][table]["columns"])
            assert not missing, f"{task.spec.id}: {table} lacks {sorted(missing)}"


def test_every_scope_resolves_or_names_why_not(tasks, repository):
    library = load_scopes(CATALOG / "camels")
    entities = read_table(repository, "entities")
    span = (date(REPOSITORY_YEARS[0], 1, 1), date(REPOSITORY_YEARS[1], 12, 31))
    resolved = 0
    for task in tasks.values():
        for name in task.spec.scopes:
            try:
                scope = resolve_scope(library[name], entities, KEY, *span, task.spec.min_entities,
                                      task.spec.min_years)
            except ScopeUnavailable as reason:  # too few basins/years here; never a bad rule
                assert "entities have no column" not in str(reason), reason
                assert "unreadable entity rule" not in str(reason), reason
                continue
            assert len(scope.entities) >= task.spec.min_entities
            resolved += 1
    assert resolved >= 5 * 5


def scoped_repository_series(repository: Path, query: Query) -> pd.DataFrame:
    """The repository's time series cut to the query's basins and days (independently of staging)."""
    frame = read_table(repository, "timeseries", [KEY, "date", "qobs_mm_d"])
    frame[KEY] = frame[KEY].astype(str)
    frame["date"] = pd.to_datetime(frame["date"])
    keep = frame[KEY].isin(query.entities) & frame["date"].between(pd.Timestamp(query.start),
                                                                   pd.Timestamp(query.end))
    return frame[keep].sort_values([KEY, "date"]).reset_index(drop=True)


@pytest.mark.parametrize("task_id", HOLDOUT_TASKS)
def test_holdout_staging_withholds_the_test_period_and_stays_in_scope(task_id, staged, repository):
    query = staged[task_id].query
    public = read_series(staged[task_id].public)
    original = scoped_repository_series(repository, query)
    entities = pd.read_parquet(staged[task_id].public / "entities.parquet")

    # Only the scope's basins, only its days (the repository goes on for a year after its end).
    assert query.end == date(2002, 12, 31) and query.start == date(2000, 1, 1)
    assert sorted(public[KEY].unique()) == sorted(query.entities) == sorted(entities[KEY].astype(str))
    assert len(query.entities) == 3
    assert public["date"].min() == pd.Timestamp(query.start)
    assert public["date"].max() == pd.Timestamp(query.end)
    assert public[[KEY, "date"]].equals(original[[KEY, "date"]])
    # The test period is the last 30 % of the 1096 calendar days: from day floor(0.7 * 1096) = 767.
    first_test = pd.Timestamp(date(2000, 1, 1) + timedelta(days=767))
    assert artifact_block(query.prompt)["rows"] == {"kind": "holdout", "column": "qobs_mm_d",
                                                    "table": "timeseries", "time": "date",
                                                    "from": first_test.date().isoformat(),
                                                    "to": "2002-12-31"}
    test = public["date"] >= first_test
    assert public.loc[test, "qobs_mm_d"].isna().all()
    pd.testing.assert_series_equal(public.loc[~test, "qobs_mm_d"], original.loc[~test, "qobs_mm_d"])
    # The truth is what was withheld; every test day of every basin is owed.
    observed = original[test & original["qobs_mm_d"].notna()]
    truth = staged[task_id].truth.sort_values([KEY, "date"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(truth, observed.reset_index(drop=True), check_dtype=False)
    required = staged[task_id].required
    assert len(required) == 3 * (1096 - 767)
    assert set(map(tuple, required.astype(str).to_numpy())) == set(
        map(tuple, public.loc[test, [KEY, "date"]].astype(str).to_numpy()))


def test_gap_filling_staging_hides_every_truth_row(staged, repository):
    query = staged["camels-gap-filling"].query
    public = read_series(staged["camels-gap-filling"].public)
    original = scoped_repository_series(repository, query)
    truth = staged["camels-gap-filling"].truth

    assert sorted(public[KEY].unique()) == sorted(query.entities)
    assert public[[KEY, "date"]].equals(original[[KEY, "date"]])
    merged = truth.merge(public, on=[KEY, "date"], how="left", suffixes=("_truth", "_public"))
    assert len(merged) == len(truth) > 0
    assert merged["qobs_mm_d_public"].isna().all()
    assert merged["qobs_mm_d_truth"].notna().all()
    # Hidden values are the repository's observations; nothing else changed.
    hidden = original.merge(truth[[KEY, "date"]], on=[KEY, "date"], how="left", indicator=True)
    is_hidden = (hidden["_merge"] == "both").to_numpy()
    np.testing.assert_array_equal(truth.sort_values([KEY, "date"])["qobs_mm_d"],
                                  original.loc[is_hidden, "qobs_mm_d"])
    pd.testing.assert_series_equal(public.loc[~is_hidden, "qobs_mm_d"], original.loc[~is_hidden, "qobs_mm_d"])
    # About 10 % of each basin's observed days, and the owed rows are every null day in public.
    for gauge, rows in original.groupby(KEY):
        target = round(0.1 * rows["qobs_mm_d"].notna().sum())
        assert target <= is_hidden[rows.index].sum() < target + 30, gauge  # runs of at most 30 days
    nulls = public.loc[public["qobs_mm_d"].isna(), [KEY, "date"]].reset_index(drop=True)
    required = staged["camels-gap-filling"].required.sort_values([KEY, "date"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(required, nulls, check_dtype=False)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reproduce_runs_twice_identically_and_the_harness_grades_it(task_id, tasks, staged, tmp_path):
    task, query = tasks[task_id], staged[task_id].query
    first = run_reproduce(task, make_workspace(query.prompt, staged[task_id].public, tmp_path))
    second = run_reproduce(task, make_workspace(query.prompt, staged[task_id].public, tmp_path))

    assert first == second  # answer.json, the artifact and the bootstrap, byte for byte
    spec = task.spec
    if spec.artifact is None:
        answer = first.document["answer"]
        low, high = spec.answer.hypothesis.valid_range
        assert isinstance(answer, float) and math.isfinite(answer)
        assert (low is None or answer >= low) and (high is None or answer <= high)
        replicates = json.loads(first.bootstrap)["values"]
        assert 480 <= len(replicates) <= 500 and all(math.isfinite(v) for v in replicates)
        return
    required = staged[task_id].required
    frame = read_artifact(first.artifact, spec.artifact, required)
    assert len(frame) == len(required)
    result = grade(task, first, staged[task_id].truth, required)
    assert result.artifact_problem is None and result.grades.undefined == {}
    assert sorted(result.grades.values) == sorted(m.name for m in spec.answer.metrics)
    for metric in spec.answer.metrics:
        value = result.grades.values[metric.name]
        low, high = metric.valid_range
        assert value is not None and math.isfinite(value), metric.name
        assert (low is None or value >= low) and (high is None or value <= high), metric.name
    if task_id == "camels-signature-clustering":
        # The script's silhouette is exact in the prompt's space: it must equal the harness's.
        reported = first.document["metrics"]["silhouette"]
        assert reported == pytest.approx(result.grades.values["silhouette"], abs=5e-7)


def load_reproduce_module(task: CatalogTask, monkeypatch: pytest.MonkeyPatch):
    """Import a task's reproduce.py as a module (annotator_lib on the path, one thread)."""
    for folder in ANNOTATOR_PATH:
        monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    spec = importlib.util.spec_from_file_location(f"reproduce_{task.spec.id.replace('-', '_')}",
                                                  task.reproduce)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_annotator_signatures_agree_with_the_harness_signatures(tasks, staged, monkeypatch):
    # Two independent implementations of the prompt's definitions, on a staged query's basins.
    module = load_reproduce_module(tasks["camels-signature-clustering"], monkeypatch)
    public = read_series(staged["camels-signature-clustering"].public)
    assert public["qobs_mm_d"].isna().any()  # the gap interpolation of the baseflow index is exercised
    for gauge, basin in public.groupby(KEY, sort=True):
        basin = basin.reset_index(drop=True)
        theirs = module.signatures(basin)
        ours = basin_signatures(basin["qobs_mm_d"], basin["prcp_mm_d"])
        assert list(ours) == list(SIGNATURE_DEFINITIONS)  # the script returns them in this order
        np.testing.assert_allclose(theirs, list(ours.values()), rtol=1e-9, atol=1e-9, err_msg=gauge)
