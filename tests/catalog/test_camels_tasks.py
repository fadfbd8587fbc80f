"""The `camels` catalog: every task loads, every scope resolves, every annotator script reproduces.

The end-to-end check builds a tiny synthetic CAMELS repository (8 basins, 2000-2002) with the
project's own synthesizer and reader, stages one query workspace per task exactly as an agent sees
it (`prompt.md` with the scope block, read-only `data/*.parquet`, writable `work/`), runs the task's
`reproduce.py` there twice and checks the answer's shape, range and byte-for-byte determinism.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from stages.catalog import CatalogTask, load_catalog, load_scopes
from stages.prompts import render_prompt
from stages.scopes import ResolvedScope, ScopeUnavailable, resolve_scope
from stages.sources import camels_us as camels_reader
from stages.synthesize import camels_us as camels_synth
from stages.tables import collect

CATALOG = Path(__file__).resolve().parents[2] / "catalog"
TASK_IDS = [
    "camels-aridity-runoff",
    "camels-gap-filling",
    "camels-model-comparison",
    "camels-signature-clustering",
    "camels-streamflow-prediction",
]
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
# The scope each task is run on end to end (every one resolves on the tiny repository).
SMOKE_SCOPE = {
    "camels-aridity-runoff": "years_2000_2004",
    "camels-gap-filling": "sample_6_seed1",
    "camels-model-comparison": "years_2000_2004",
    "camels-signature-clustering": "years_2000_2004",
    "camels-streamflow-prediction": "years_2000_2004",
}
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# --- helpers: a tiny repository and one staged query workspace ------------------------------------


def build_repository(raw_dir: Path) -> dict[str, pd.DataFrame]:
    """Read synthetic raw CAMELS files into the aligned `entities` and `timeseries` frames."""
    tables = {name: t.frame for name, t in collect(camels_reader.read(raw_dir, camels_reader.Params())).items()}
    timeseries = tables["daily"]
    basins = sorted(timeseries["gauge_id"].unique())
    entities = tables["attributes"]
    entities = entities[entities["gauge_id"].isin(basins)].reset_index(drop=True)
    return {"entities": entities, "timeseries": timeseries}


def resolve(
    task: CatalogTask, scope_name: str, repository: dict[str, pd.DataFrame]
) -> ResolvedScope:
    """Resolve one of the task's scopes against the repository, with the task's minimums."""
    dates = pd.to_datetime(repository["timeseries"]["date"])
    return resolve_scope(
        load_scopes(CATALOG / "camels")[scope_name],
        repository["entities"],
        "gauge_id",
        dates.min().date(),
        dates.max().date(),
        task.spec.min_entities,
        task.spec.min_years,
    )


def stage_workspace(
    workspace: Path, task: CatalogTask, scope: ResolvedScope, repository: dict[str, pd.DataFrame]
) -> None:
    """Write `prompt.md`, `data/<table>.parquet` (all basins and days, staged columns), `work/`."""
    data = workspace / "data"
    data.mkdir(parents=True)
    (workspace / "work").mkdir()
    (workspace / "prompt.md").write_text(render_prompt(task.spec, scope))
    for table, columns in task.spec.data.tables.items():
        repository[table][columns].to_parquet(data / f"{table}.parquet", index=False)
    (data / "README.md").write_text("Staged tables of the camels repository.\n")


def run_reproduce(task: CatalogTask, workspace: Path) -> bytes:
    """Run the annotator script like an agent (cwd = workspace, one thread); return answer.json."""
    shutil.rmtree(workspace / "work")
    (workspace / "work").mkdir()
    result = subprocess.run(
        [sys.executable, str(task.reproduce)],
        cwd=workspace,
        env={**os.environ, **THREADS, "PYTHONPATH": str(CATALOG / "camels" / "annotator_lib")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return (workspace / "work" / "answer.json").read_bytes()


# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tasks() -> dict[str, CatalogTask]:
    return {task.spec.id: task for task in load_catalog(CATALOG, ["camels"])}


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    raw_dir = tmp_path_factory.mktemp("raw") / "camels_us"
    camels_synth.write(raw_dir, camels_synth.Params(n_basins=8, first_year=2000, last_year=2002))
    return build_repository(raw_dir)


# --- the catalog as data --------------------------------------------------------------------------


def test_the_camels_catalog_holds_the_five_tasks(tasks):
    assert sorted(tasks) == TASK_IDS
    for task in tasks.values():
        assert task.spec.domain == "camels"
        assert task.spec.data.repository == "camels"
        assert task.spec.modalities == ["timeseries", "tabular"]
        assert task.spec.source.doi


def test_every_scope_is_used_and_every_task_has_about_twenty(tasks):
    library = load_scopes(CATALOG / "camels")
    used = {name for task in tasks.values() for name in task.spec.scopes}
    assert used == set(library)
    assert 22 <= len(library) <= 26
    for task in tasks.values():
        assert 18 <= len(task.spec.scopes) <= 25, task.spec.id
        assert len(set(task.spec.scopes)) == len(task.spec.scopes), task.spec.id


def test_prompts_fill_every_placeholder_and_never_name_the_source(tasks):
    scope = ResolvedScope(
        "s",
        "temporal",
        "all basins",
        "",
        "gauge_id",
        ("01000001",),
        date(2000, 1, 1),
        date(2002, 12, 31),
    )
    for task in tasks.values():
        prompt = render_prompt(task.spec, scope)
        assert "$" not in prompt, task.spec.id
        assert "work/answer.json" in prompt
        assert task.spec.source.doi not in prompt


def test_no_task_stages_a_streamflow_signature(tasks):
    for task in tasks.values():
        staged = {column for columns in task.spec.data.tables.values() for column in columns}
        assert not staged & STREAMFLOW_SIGNATURES, task.spec.id


def test_metric_names_match_the_answers_the_scripts_write(tasks):
    names = {
        task_id: [m.name for m in tasks[task_id].spec.answer.metrics or []] for task_id in TASK_IDS
    }
    assert names == {
        "camels-aridity-runoff": [],
        "camels-gap-filling": ["rmse_mm_d", "nse_masked"],
        "camels-model-comparison": [
            "median_nse_linear",
            "median_nse_forest",
            "share_forest_better",
        ],
        "camels-signature-clustering": ["silhouette", "n_clusters"],
        "camels-streamflow-prediction": ["nse", "kge"],
    }
    assert tasks["camels-aridity-runoff"].spec.answer.hypothesis.format == "number"


# --- against a tiny synthetic repository ----------------------------------------------------------


def test_staged_columns_exist_in_the_repository(tasks, repository):
    for task in tasks.values():
        for table, columns in task.spec.data.tables.items():
            missing = set(columns) - set(repository[table].columns)
            assert not missing, f"{task.spec.id}: {table} lacks {sorted(missing)}"


def test_every_scope_resolves_or_names_why_not(tasks, repository):
    resolved = 0
    for task in tasks.values():
        for name in task.spec.scopes:
            try:
                scope = resolve(task, name, repository)
            except ScopeUnavailable as reason:  # too few basins/years here; never a bad rule
                assert "entities have no column" not in str(reason), reason
                assert "unreadable entity rule" not in str(reason), reason
                continue
            assert len(scope.entities) >= task.spec.min_entities
            resolved += 1
    assert resolved >= 5 * 5


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reproduce_writes_a_valid_answer_twice_identically(task_id, tasks, repository, tmp_path):
    task = tasks[task_id]
    scope = resolve(task, SMOKE_SCOPE[task_id], repository)
    stage_workspace(tmp_path, task, scope, repository)

    first = run_reproduce(task, tmp_path)
    second = run_reproduce(task, tmp_path)

    assert first == second
    answer = json.loads(first)
    spec = task.spec.answer
    if spec.metrics is not None:
        assert set(answer) == {"metrics"}
        assert sorted(answer["metrics"]) == sorted(m.name for m in spec.metrics)
        for metric in spec.metrics:
            value = answer["metrics"][metric.name]
            low, high = metric.valid_range
            assert isinstance(value, float), metric.name
            assert (low is None or value >= low) and (high is None or value <= high), metric.name
    else:
        assert set(answer) == {"answer"}
        low, high = spec.hypothesis.valid_range
        assert isinstance(answer["answer"], float)
        assert (low is None or answer["answer"] >= low) and (high is None or answer["answer"] <= high)
