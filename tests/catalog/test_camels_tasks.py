"""The `camels` catalog: every task loads, stages, runs and grades, and every annotator gets known answers right.

Three parts:

- The catalog as data: five tasks, their scopes, prompts and staged columns.
- End to end on a tiny synthetic repository (8 basins, 2000-2003, written by the project's synthesizer
  and read by its `camels_us` reader through ingest and align): per task one query is staged by the
  production code (`stages.staging.stage_query`), a workspace is made from its public files
  (`stages.workspace.make_workspace`), the task's `reproduce.py` runs there like an agent, twice, and
  what it hands in is graded by the harness (`read_artifact`, `recompute`) against the query's
  hidden truth. The query's scope is a random sample of basins over 2000-2002, so the staged files
  can be checked for basins and days outside it.
- Known answers: per annotator script, a hand-built workspace whose right answer follows from its
  construction (an OLS slope worked out by hand, two groups of basins, streamflow that is an exact
  function of a staged input, gaps in an exact recession), with the expected value derived in the
  test by plain numpy, never by the script's own functions. (One test does import the clustering
  script's signatures: to check them against the harness's, two implementations of one definition.)
"""

from __future__ import annotations

import importlib.util
import io
import itertools
import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scibench_testing.domains import synthesize_and_ingest
from sklearn.metrics import silhouette_score

from stages.align import align
from stages.catalog import CatalogTask, ScopeSpec, load_catalog, load_scopes
from stages.construct import Query, extract_tables
from stages.grading.artifacts import read_artifact
from stages.grading.recompute import Recomputed, recompute
from stages.grading.signatures import SIGNATURE_DEFINITIONS, basin_signatures, signature_space
from stages.hashing import content_hash
from stages.prompts import ARTIFACT_BLOCK, render_prompt
from stages.repository import read_manifest, read_table
from stages.scopes import ResolvedScope, ScopeUnavailable, resolve_scope
from stages.scoring.outcomes import Execution
from stages.staging import stage_query, stage_task
from stages.synthesize import camels_us as camels_synth
from stages.workspace import make_workspace

CATALOG = Path(__file__).resolve().parents[2] / "catalog"
ANNOTATOR_LIB = CATALOG / "camels" / "annotator_lib"
KEY = "gauge_id"
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
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
REPOSITORY_YEARS = (2000, 2003)
SMOKE_YEARS = (2000, 2002)  # ends a year before the repository: staging must cut the last year


# --- running an annotator script like an agent ----------------------------------------------------


@dataclass(frozen=True)
class Run:
    """What one run of reproduce.py left in `work/`."""

    answer: bytes
    artifact: bytes | None
    bootstrap: bytes | None

    @property
    def document(self) -> dict:
        """answer.json as strict JSON (a NaN or Infinity in it fails the test)."""
        return json.loads(self.answer, parse_constant=reject_constant)


def reject_constant(name: str) -> None:
    raise AssertionError(f"answer.json holds {name}, which is not JSON")


def run_reproduce(task: CatalogTask, workspace: Path) -> Run:
    """Run the annotator script unsandboxed (cwd = workspace, one thread); return what it wrote."""
    result = subprocess.run(
        [sys.executable, str(task.reproduce)],
        cwd=workspace,
        env={**os.environ, **THREADS, "PYTHONPATH": str(ANNOTATOR_LIB)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    work = workspace / "work"
    artifact = work / task.spec.artifact.file if task.spec.artifact is not None else None
    bootstrap = work / "bootstrap.json"
    return Run(
        (work / "answer.json").read_bytes(),
        artifact.read_bytes() if artifact is not None else None,
        bootstrap.read_bytes() if bootstrap.exists() else None,
    )


def grade(task: CatalogTask, run: Run, truth: pd.DataFrame, required: pd.DataFrame) -> Recomputed:
    """The harness's recomputation of the run's metrics against the truth."""
    execution = Execution(0, False, None, run.answer.decode())
    return recompute(task.spec, execution, run.artifact, None, truth, required, KEY)


def artifact_block(prompt: str) -> dict:
    return json.loads(ARTIFACT_BLOCK.search(prompt).group("json"))


def read_series(folder: Path) -> pd.DataFrame:
    """`folder/timeseries.parquet` as an agent reads it, sorted, keys as text, dates as timestamps."""
    frame = pd.read_parquet(folder / "timeseries.parquet")
    frame[KEY] = frame[KEY].astype(str)
    frame["date"] = pd.to_datetime(frame["date"])
    return frame.sort_values([KEY, "date"]).reset_index(drop=True)


# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tasks() -> dict[str, CatalogTask]:
    return {task.spec.id: task for task in load_catalog(CATALOG, ["camels"])}


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
    """One query of a task staged into a task folder by `stages.staging.stage_query`."""

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
        query = Query("q-" + content_hash([task.task_hash, scope.block()]), task_id, task.task_hash,
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


def test_every_scope_is_used_and_every_task_has_about_twenty(tasks):
    library = load_scopes(CATALOG / "camels")
    used = {name for task in tasks.values() for name in task.spec.scopes}
    assert used == set(library)
    assert 22 <= len(library) <= 26
    for task in tasks.values():
        assert 18 <= len(task.spec.scopes) <= 25, task.spec.id
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
    monkeypatch.syspath_prepend(str(ANNOTATOR_LIB))
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


# --- known answers: hand-built workspaces ---------------------------------------------------------


def known_scope(gauges: list[str], start: date, end: date) -> ResolvedScope:
    return ResolvedScope("known", "sample_size", "hand-built basins", "", KEY, tuple(sorted(gauges)),
                         start, end)


def forcing(dates: pd.DatetimeIndex, prcp: np.ndarray) -> dict[str, np.ndarray]:
    """Plausible warm-season forcing around `prcp`: always above freezing (no snow), seasonal."""
    season = np.sin(2 * np.pi * dates.dayofyear.to_numpy() / 365.25)
    tmax = 22.0 + 6.0 * season
    return {"prcp_mm_d": prcp, "tmax_c": tmax, "tmin_c": tmax - 10.0, "srad_w_m2": 200.0 + 80.0 * season,
            "vp_pa": 1200.0 + 300.0 * season, "dayl_s": 43200.0 + 9000.0 * season,
            "swe_mm": np.zeros(len(dates))}


def basin(gauge: str, dates: pd.DatetimeIndex, prcp: np.ndarray, qobs: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({KEY: gauge, "date": dates.date, **forcing(dates, prcp), "qobs_mm_d": qobs})


def entities(gauges: list[str], **columns) -> pd.DataFrame:
    """One row per basin with every entity column any camels task stages (overridable)."""
    n = len(gauges)
    frame = pd.DataFrame({
        KEY: gauges, "huc_02": ["01"] * n, "gauge_name": [f"Basin {g}" for g in gauges],
        "gauge_lat_deg": np.linspace(40.0, 45.0, n), "gauge_lon_deg": np.linspace(-75.0, -70.0, n),
        "elev_mean_m": 300.0, "slope_mean_m_km": 20.0, "area_gages2_km2": 250.0, "p_mean_mm_d": 3.0,
        "pet_mean_mm_d": 2.5, "aridity": 0.8, "frac_snow": 0.0, "p_seasonality": 0.1,
        "high_prec_freq_d_yr": 20.0, "low_prec_freq_d_yr": 200.0,
    })
    for name, values in columns.items():
        frame[name] = values
    return frame


def hand_workspace(tmp_path: Path, task: CatalogTask, scope: ResolvedScope, series: pd.DataFrame,
                   basins: pd.DataFrame) -> Path:
    """A workspace with the task's staged columns of hand-built tables and the rendered prompt."""
    public = tmp_path / "public"
    public.mkdir(parents=True)
    tables = {"timeseries": series, "entities": basins}
    for name, columns in task.spec.data.tables.items():
        tables[name][columns].to_parquet(public / f"{name}.parquet", index=False)
    return make_workspace(render_prompt(task.spec, scope), public, tmp_path)


def days(start: date, end: date) -> pd.DatetimeIndex:
    return pd.date_range(start, end, freq="D")


def test_aridity_slope_is_the_hand_computed_ols_slope(tasks, tmp_path):
    # Five basins whose runoff ratio on observed days is exactly r; aridity x. By hand:
    # mean x = 6.0 / 5 = 1.2, x - mean = (-0.8, -0.4, -0.2, 0.4, 1.0), Sxx = 2.0;
    # mean r = 1.82 / 5 = 0.364, r - mean = (0.256, 0.086, 0.046, -0.144, -0.244);
    # Sxy = -0.2048 - 0.0344 - 0.0092 - 0.0576 - 0.244 = -0.55; slope = Sxy / Sxx = -0.275.
    x = np.array([0.4, 0.8, 1.0, 1.6, 2.2])
    r = np.array([0.62, 0.45, 0.41, 0.22, 0.12])
    slope = np.sum((x - x.mean()) * (r - r.mean())) / np.sum((x - x.mean()) ** 2)
    assert slope == pytest.approx(-0.275, abs=1e-12)
    gauges = [f"9000000{i}" for i in range(1, 6)]
    # Data run a month beyond the scope on both sides; a sixth basin is outside it. Out of scope,
    # and on the null days, precipitation is huge: using those days changes every ratio.
    dates = days(date(2000, 12, 1), date(2002, 1, 31))
    in_scope = (dates >= pd.Timestamp(2001, 1, 1)) & (dates <= pd.Timestamp(2001, 12, 31))
    prcp_base = 1.0 + (np.arange(len(dates)) % 7)
    frames = []
    for i, gauge in enumerate([*gauges, "90000009"]):
        gap = (np.arange(len(dates)) >= 100 + 20 * i) & (np.arange(len(dates)) < 130 + 20 * i)  # in scope
        prcp = np.where(gap | ~in_scope, 60.0, prcp_base)
        ratio = r[i] if i < 5 else 5.0
        qobs = np.where(gap, np.nan, np.where(in_scope, ratio * prcp, 40.0))
        frames.append(basin(gauge, dates, prcp, qobs))
    series = pd.concat(frames, ignore_index=True)
    basins = entities([*gauges, "90000009"], aridity=[*x, 0.1])
    task = tasks["camels-aridity-runoff"]
    scope = known_scope(gauges, date(2001, 1, 1), date(2001, 12, 31))

    first = run_reproduce(task, hand_workspace(tmp_path / "a", task, scope, series, basins))
    second = run_reproduce(task, hand_workspace(tmp_path / "b", task, scope, series, basins))

    assert first == second
    assert first.document == {"answer": -0.275}
    # Every bootstrap replicate is the OLS slope of some resample (a multiset of 5 of the 5 basins
    # with at least two distinct aridities): 126 multisets, 121 with a slope, worked out here.
    possible = []
    for picks in itertools.combinations_with_replacement(range(5), 5):
        xs, rs = x[list(picks)], r[list(picks)]
        if len(set(picks)) > 1:
            possible.append(np.sum((xs - xs.mean()) * (rs - rs.mean())) / np.sum((xs - xs.mean()) ** 2))
    assert len(possible) == 121
    replicates = np.array(json.loads(first.bootstrap)["values"])
    # A resample of one basin repeated has probability 5 / 5**5 = 1/625: ~1 of 500 is skipped.
    assert 490 <= len(replicates) <= 500 and np.isfinite(replicates).all()
    distance = np.abs(replicates[:, None] - np.array(possible)[None, :]).min(axis=1)
    assert distance.max() < 1e-9
    assert np.std(replicates) > 0.01  # the resamples differ: a spread to set the tolerance from


def test_clustering_finds_the_two_built_groups_and_reports_the_harness_silhouette(tasks, tmp_path):
    # Three wet flashy basins (streamflow follows each day's rain over a small base flow) and three
    # dry baseflow-fed ones (a slow seasonal flow), each basin scaled and shaped a little
    # differently: in the standardised signature space the groups lie far apart and their members
    # close together, so the partition is known.
    dates = days(date(2001, 1, 1), date(2002, 12, 31))
    rng = np.random.default_rng(11)
    prcp = np.where(rng.random(len(dates)) < 0.35, rng.exponential(9.0, len(dates)), 0.0)
    season = np.sin(2 * np.pi * dates.dayofyear.to_numpy() / 365.25)
    wet, dry = ["80000001", "80000002", "80000003"], ["80000004", "80000005", "80000006"]
    shapes = [(0.9, 0.03), (1.0, 0.05), (1.1, 0.08)]
    frames = []
    for (scale, base), gauge in zip(shapes, wet, strict=True):
        frames.append(basin(gauge, dates, prcp, scale * (base + 0.8 * prcp)))
    for (scale, amplitude), gauge in zip(shapes, dry, strict=True):
        qobs = scale * (0.3 + amplitude * season)
        qobs[200:215] = np.nan  # a gap: the baseflow filter runs on the interpolated series
        frames.append(basin(gauge, dates, prcp, qobs))
    series = pd.concat(frames, ignore_index=True)
    task = tasks["camels-signature-clustering"]
    scope = known_scope(wet + dry, dates[0].date(), dates[-1].date())
    workspace = hand_workspace(tmp_path, task, scope, series, entities(wet + dry))

    run = run_reproduce(task, workspace)

    labels = pd.read_parquet(io.BytesIO(run.artifact)).astype({KEY: str}).set_index(KEY)["cluster"]
    groups = {frozenset(labels.index[labels == c]) for c in labels.unique()}
    assert groups == {frozenset(wet), frozenset(dry)}
    space = signature_space(read_series(workspace / "data"), KEY, "qobs_mm_d", "prcp_mm_d")
    known = [0 if gauge in wet else 1 for gauge in space.index]
    expected = silhouette_score(space.to_numpy(), known)
    assert expected > 0.7
    assert run.document == {"metrics": {"silhouette": round(expected, 6)}}
    truth = space.reset_index()
    result = grade(task, run, truth, truth[[KEY]])
    assert result.grades.values["silhouette"] == pytest.approx(expected, abs=1e-12)


def first_test_day(start: date, end: date) -> pd.Timestamp:
    """First test day by the prompt's rule: start + floor(0.7 x calendar days)."""
    return pd.Timestamp(start + timedelta(days=math.floor(0.7 * ((end - start).days + 1))))


def nse(obs: np.ndarray, sim: np.ndarray) -> float:
    return float(1.0 - np.sum((sim - obs) ** 2) / np.sum((obs - obs.mean()) ** 2))


def rainy_days(dates: pd.DatetimeIndex, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.where(rng.random(len(dates)) < 0.4, rng.exponential(8.0, len(dates)), 0.0)


def holdout_workspace(tmp_path: Path, task: CatalogTask, flows: dict[str, np.ndarray],
                      prcp: np.ndarray, dates: pd.DatetimeIndex):
    """A workspace whose test-period streamflow is withheld by hand; returns it, the truth, the rows owed."""
    first_test = first_test_day(dates[0].date(), dates[-1].date())
    test = dates >= first_test
    frames = [basin(g, dates, prcp, np.where(test, np.nan, q)) for g, q in flows.items()]
    scope = known_scope(list(flows), dates[0].date(), dates[-1].date())
    workspace = hand_workspace(tmp_path, task, scope, pd.concat(frames, ignore_index=True),
                               entities(list(flows)))
    assert artifact_block((workspace / "prompt.md").read_text())["rows"]["from"] == first_test.date().isoformat()
    truth = pd.concat([pd.DataFrame({KEY: g, "date": dates[test], "qobs_mm_d": q[test]})
                       for g, q in flows.items()], ignore_index=True)
    return workspace, truth, truth[[KEY, "date"]], test


def test_streamflow_prediction_learns_an_exact_function_and_a_constant_exactly(tasks, tmp_path):
    # Basin A's streamflow is half the same day's precipitation, a staged input the script feeds its
    # gradient-boosted trees as a feature: trees approximate a monotone function of one input up to
    # their binning, so the withheld test period must be simulated almost perfectly (NSE > 0.9;
    # the slack covers the bins and test rain beyond the training maximum). Basin B is constant:
    # every training target is 2.0, so the trees' prediction is exactly 2.0. Basin C is noise drawn
    # independently of every input; the harness's median NSE is that of A and C (B has none).
    dates = days(date(2001, 1, 1), date(2003, 12, 31))
    prcp = rainy_days(dates, 5)
    noise = np.random.default_rng(6).gamma(2.0, 1.0, len(dates))
    flows = {"70000001": 0.5 * prcp, "70000002": np.full(len(dates), 2.0), "70000003": noise}
    task = tasks["camels-streamflow-prediction"]
    workspace, truth, required, test = holdout_workspace(tmp_path, task, flows, prcp, dates)

    run = run_reproduce(task, workspace)

    predictions = read_artifact(run.artifact, task.spec.artifact, required)
    sim = {g: predictions.loc[predictions[KEY] == g, "qsim_mm_d"].to_numpy() for g in flows}
    assert nse(flows["70000001"][test], sim["70000001"]) > 0.9
    np.testing.assert_array_equal(sim["70000002"], 2.0)
    # Its own estimates leave the constant basin out as the harness does (no NaN in answer.json).
    assert all(math.isfinite(value) for value in run.document["metrics"].values())
    result = grade(task, run, truth, required)
    # The constant basin has no NSE (zero variance); the median of the two others is their mean.
    expected = (nse(flows["70000001"][test], sim["70000001"]) + nse(noise[test], sim["70000003"])) / 2
    assert result.grades.values["nse"] == pytest.approx(expected, abs=1e-12)


def test_model_comparison_linear_model_recovers_an_exact_linear_relation(tasks, tmp_path):
    # Basin A: streamflow is an exact linear function of the same day's precipitation (a staged
    # input both models get), so least squares fits it without error and predicts the withheld
    # test period exactly: NSE = 1 up to rounding (1e-6). Basins B and C: noise drawn independently
    # of every input, where no model has skill out of sample (NSE <= ~0). Their in-sample NSE is
    # not ~0 (a forest fits noise), so the script's reported estimates, medians over A, B and C,
    # i.e. a noise basin's value, show whether it estimates out of sample as the prompt asks.
    dates = days(date(2001, 1, 1), date(2003, 12, 31))
    prcp = rainy_days(dates, 8)
    flows = {"60000001": 0.5 * prcp + 1.0, "60000002": np.random.default_rng(9).gamma(2.0, 1.0, len(dates)),
             "60000003": np.random.default_rng(10).gamma(2.0, 1.0, len(dates))}
    task = tasks["camels-model-comparison"]
    workspace, truth, required, test = holdout_workspace(tmp_path, task, flows, prcp, dates)

    run = run_reproduce(task, workspace)

    predictions = read_artifact(run.artifact, task.spec.artifact, required)
    scores = {column: {g: nse(flows[g][test], predictions.loc[predictions[KEY] == g, column].to_numpy())
                       for g in flows} for column in ("qsim_linear_mm_d", "qsim_forest_mm_d")}
    assert scores["qsim_linear_mm_d"]["60000001"] == pytest.approx(1.0, abs=1e-6)
    assert scores["qsim_forest_mm_d"]["60000001"] > 0.9  # trees on a monotone function of one input
    for noise in ("60000002", "60000003"):
        assert scores["qsim_linear_mm_d"][noise] < 0.05 and scores["qsim_forest_mm_d"][noise] < 0.05
    reported = run.document["metrics"]
    assert reported["median_nse_linear"] < 0.05 and reported["median_nse_forest"] < 0.05
    result = grade(task, run, truth, required)
    assert result.grades.values == pytest.approx(
        {"median_nse_linear": float(np.median(list(scores["qsim_linear_mm_d"].values()))),
         "median_nse_forest": float(np.median(list(scores["qsim_forest_mm_d"].values())))}, abs=1e-12)


def test_gap_filling_restores_gaps_inside_an_exact_recession(tasks, tmp_path):
    # Every basin recedes exponentially, q + 0.01 = c * exp(-k t), with gaps of 5 to 30 days inside
    # the record. The script fills in log(q + eps), eps = 0.01 mm/d for a basin whose mean flow is
    # below 1 mm/d (its docstring), where these series are straight lines: the interpolation
    # across an interior gap is exact, and so is every departure from it the trees learn on the
    # script's pseudo-gaps (0, as none of them touches the record's ends, where it holds the edge
    # value). So the fill is the recession up to rounding (1e-9 relative); interpolating q itself
    # would miss by up to 5e-4.
    dates = days(date(2001, 1, 1), date(2002, 12, 31))
    t = np.arange(len(dates), dtype=float)
    gauges = ["50000001", "50000002", "50000003"]
    flows = {g: c * np.exp(-k * t) - 0.01
             for g, c, k in zip(gauges, (0.9, 0.6, 0.5), (0.002, 0.003, 0.0015), strict=True)}
    gaps = {"50000001": [(100, 5), (400, 30)], "50000002": [(250, 17)], "50000003": [(40, 9), (600, 30)]}
    hidden = {g: np.isin(t, [d for first, n in gaps[g] for d in range(first, first + n)]) for g in gauges}
    assert all(q.mean() < 1.0 and q.min() > 0 for q in flows.values())
    frames = [basin(g, dates, np.zeros(len(dates)), np.where(hidden[g], np.nan, q)) for g, q in flows.items()]
    task = tasks["camels-gap-filling"]
    workspace = hand_workspace(tmp_path, task, known_scope(gauges, dates[0].date(), dates[-1].date()),
                               pd.concat(frames, ignore_index=True), entities(gauges))

    run = run_reproduce(task, workspace)

    truth = pd.concat([pd.DataFrame({KEY: g, "date": dates[hidden[g]], "qobs_mm_d": q[hidden[g]]})
                       for g, q in flows.items()], ignore_index=True)
    required = truth[[KEY, "date"]]
    filled = pd.read_parquet(io.BytesIO(run.artifact))
    assert sorted(zip(filled[KEY], pd.to_datetime(filled["date"]), strict=True)) == sorted(
        zip(required[KEY], required["date"], strict=True))  # exactly the null days, once each
    joined = read_artifact(run.artifact, task.spec.artifact, required)
    np.testing.assert_allclose(joined["qfill_mm_d"], truth["qobs_mm_d"], rtol=1e-9)
    linear_in_q = np.concatenate([np.interp(t[hidden[g]], t[~hidden[g]], q[~hidden[g]])
                                  for g, q in flows.items()])
    assert np.max(np.abs(linear_in_q / truth["qobs_mm_d"] - 1)) > 1e-4  # the fixture tells them apart
    assert run.document == {"metrics": {"nse_masked": 1.0, "rmse_mm_d": 0.0}}  # its own pseudo-gaps too
    result = grade(task, run, truth, required)
    assert result.grades.values["nse_masked"] == pytest.approx(1.0, abs=1e-12)
    assert result.grades.values["rmse_mm_d"] == pytest.approx(0.0, abs=1e-9)
