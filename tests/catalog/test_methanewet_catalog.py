"""The `methanewet` daily catalog: the tasks as data, and known answers of its annotator library.

- The catalog as data: the 24 daily tasks load, carry the categories and difficulties declared
  for the domain, name only known scopes, render prompts free of citations, and never stage a
  column that would leak the target (its gap-filled or model-filled variant, or a site mean of it
  where whole sites are held out).
- Known answers: the library's functions on hand-made frames whose right answer follows from
  their construction (exact regressions, a gap between equal residuals, two separated groups).
"""

from __future__ import annotations

from collections import Counter
from datetime import date

import numpy as np
import pandas as pd
import pytest
from scibench_testing.annotators import CATALOG
from scibench_testing.catalog_domains import import_library
from sklearn.metrics import silhouette_score

from stages.catalog import CatalogTask, load_scopes, load_task
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.scoring.query.profiles import profile_space

DOMAIN = CATALOG / "methanewet"
LIBRARY = DOMAIN / "annotator_lib"
CATEGORIES = {
    "missing_value_imputation": 3, "feature_label_correlation": 2, "up_downscaling": 2,
    "exploratory_analysis": 2, "performance_stratification": 2, "feature_analysis": 2,
    "novel_metrics": 1, "model_comparison": 2, "forecasting": 2, "prediction_modeling": 2,
    "cross_dataset_evaluation": 1, "sampling": 1, "clustering": 1, "transfer_learning": 1,
}
DIFFICULTIES = {"easy": 4, "medium": 12, "hard": 8}
AUTHORS = ("Knox", "Delwiche", "Irvin", "Kim", "Reichstein", "Yvon-Durocher", "Chang", "Peltola",
           "McNicol", "Ying", "Arndt", "Poulter", "Melton", "Zhang", "Li et al", "Pan", "Yang")


@pytest.fixture(scope="module")
def daily_tasks() -> dict[str, CatalogTask]:
    folders = sorted(p for p in DOMAIN.iterdir() if p.name.startswith("methanewet-")
                     and "-hh-" not in p.name and (p / "task.yaml").exists())
    tasks = map(load_task, folders)  # the daily metric catalog (the multimodal hypothesis task apart)
    return {task.spec.id: task for task in tasks if task.spec.answer.hypothesis is None}


@pytest.fixture(scope="module")
def lib():
    """The annotator library modules, imported as the annotator imports them (flat, by name)."""
    yield from import_library(LIBRARY, "methanewet_annotator", "methanewet_models")


def scope_of(task: CatalogTask) -> ResolvedScope:
    return ResolvedScope("known", "sample_size", "six hand-picked sites", "", "site_id",
                         ("AA-One", "AA-Two", "BB-Thr", "BB-Fou", "CC-Fiv", "CC-Six"),
                         date(2017, 1, 1), date(2018, 12, 31))


def test_the_daily_catalog_has_the_declared_categories_and_difficulties(daily_tasks):
    assert len(daily_tasks) == 24
    assert Counter(t.spec.category for t in daily_tasks.values()) == CATEGORIES
    assert Counter(t.spec.difficulty for t in daily_tasks.values()) == DIFFICULTIES
    for task in daily_tasks.values():
        assert task.spec.domain == "methanewet" and task.spec.data.repository == "methanewet"
        assert task.spec.truth is not None and task.spec.artifact is not None
        assert all(m.grade is not None and m.references for m in task.spec.answer.metrics)
        assert set(task.spec.reference_models) >= {r for m in task.spec.answer.metrics for r in m.references}


def test_every_task_names_known_scopes_and_at_least_fifteen(daily_tasks):
    scopes = load_scopes(DOMAIN)
    for task in daily_tasks.values():
        assert set(task.spec.scopes) <= set(scopes), task.spec.id
        assert len(task.spec.scopes) >= 8, task.spec.id


def test_prompts_render_without_citations(daily_tasks):
    for task in daily_tasks.values():
        prompt = render_prompt(task.spec, scope_of(task), "q-known")
        assert "$" not in prompt.split("## Scope")[0], task.spec.id
        lowered = prompt.lower()
        assert "doi" not in lowered and (task.spec.source.doi or "@@") not in prompt, task.spec.id
        for author in AUTHORS:
            assert author not in prompt, (task.spec.id, author)


def test_no_task_stages_a_filled_copy_of_its_target(daily_tasks):
    for task in daily_tasks.values():
        target = task.spec.truth.column
        stem = target.split("_")[0]  # fch4, nee, wtd: the filled copies are <stem>_f_...
        leaks = [c for c in task.spec.data.tables["timeseries"] if c.startswith(f"{stem}_f")]
        assert not leaks, (task.spec.id, leaks)
        if task.spec.truth.kind == "held_out_entities":
            assert not any(c.startswith("fch4") for c in task.spec.data.tables["entities"]), task.spec.id


def test_to_log_floors_small_and_negative_fluxes(lib):
    annotator, _ = lib
    assert annotator.to_log(np.array([-3.0, 0.2, np.e])).tolist() == pytest.approx(
        [np.log(0.5), np.log(0.5), 1.0])


def test_site_features_split_the_water_table_and_pick_the_soil_temperature(lib):
    annotator, _ = lib
    site = pd.DataFrame({"date": pd.date_range("2018-01-01", periods=4), "ta_f_c": [1.0, 2.0, 3.0, 4.0],
                         "ts_1_c": [15.0, np.nan, 30.0, 0.0], "wtd_m": [-0.2, 0.1, np.nan, 0.3]})
    feats = annotator.site_features(site, ["wtd_m"], lags=False)
    assert feats["temperature"].tolist() == [15.0, 22.5, 30.0, 0.0]
    assert feats["wtd_below"].tolist() == pytest.approx([-0.2, 0.0, 0.0, 0.0])
    assert feats["wtd_above"].tolist() == pytest.approx([0.0, 0.1, 0.2, 0.3])
    growing = np.array([1.0, 1.0, 1.0, 0.0])  # clip(T / 15, 0, 1)
    expected = pd.Series(growing).ewm(span=30, adjust=True).mean().to_numpy()
    assert feats["pool_30"].to_numpy() == pytest.approx(expected)
    assert annotator.temperature_column(site.drop(columns="ts_1_c")) == "ta_f_c"


def test_scores_pooled_and_per_site(lib):
    annotator, _ = lib
    frame = pd.DataFrame({"site_id": ["a", "a", "a", "b", "b", "b"],
                          "obs": [1.0, 2.0, 3.0, 10.0, 20.0, 30.0],
                          "sim": [1.0, 2.0, 4.0, 10.0, 20.0, 30.0]})
    assert annotator.score(frame, "obs", "sim", "rmse", "pooled") == pytest.approx(np.sqrt(1 / 6))
    # NSE of site a: 1 - 1 / 2 = 0.5; of site b: 1; the median of two is their mean.
    assert annotator.score(frame, "obs", "sim", "nse", "median") == pytest.approx(0.75)
    assert annotator.score(frame, "obs", "sim", "nse", "mean") == pytest.approx(0.75)


def test_profile_features_match_the_harness_profile_space(lib):
    annotator, _ = lib
    rng = np.random.default_rng(3)
    dates = pd.date_range("2017-01-01", "2018-12-31")
    rows = [pd.DataFrame({"site_id": site, "date": dates,
                          "fch4_nmol_m2_s": level * (1 + np.sin(np.arange(len(dates)) / 58.0))
                          + rng.normal(0, 1, len(dates))})
            for site, level in (("a", 5.0), ("b", 20.0), ("c", 80.0))]
    frame = pd.concat(rows, ignore_index=True)
    frame.loc[frame.index % 7 == 0, "fch4_nmol_m2_s"] = np.nan
    features = ["mean", "std", "cv", "q10", "q90", "lag1", "seasonal_amplitude", "trend"]
    mine = annotator.profile_features(frame, "fch4_nmol_m2_s", features)
    harness = profile_space(frame, "site_id", "date", "fch4_nmol_m2_s", features)
    assert mine.to_numpy() == pytest.approx(harness.to_numpy(), abs=1e-9)


def test_best_partition_separates_two_groups(lib):
    annotator, _ = lib
    space = pd.DataFrame({"x": [0.0, 0.1, 0.2, 5.0, 5.1, 5.2], "y": [0.0, 0.1, 0.0, 5.0, 5.0, 5.1]})
    labels, value = annotator.best_partition(space, max_clusters=3)
    assert len(set(labels[:3])) == 1 and len(set(labels[3:])) == 1 and labels[0] != labels[3]
    assert value == pytest.approx(silhouette_score(space.to_numpy(), labels))


def test_ridge_without_penalty_recovers_exact_coefficients(lib):
    _, models = lib
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 2))
    coef = models.ridge(x, 2.0 + 3.0 * x[:, 0] - 1.0 * x[:, 1], penalty=0.0)
    assert coef == pytest.approx([2.0, 3.0, -1.0])


def test_process_fit_recovers_a_noise_free_q10_response_per_site(lib):
    _, models = lib
    temperature = np.tile(np.linspace(0.0, 25.0, 40), 2)
    sites = np.repeat(["a", "b"], 40)
    log_flux = np.where(sites == "a", np.log(10.0), np.log(40.0)) + np.log(2.5) / 10 * (temperature - 10)
    feats = pd.DataFrame({"temperature": temperature})
    setup = models.Setup(target="fch4_nmol_m2_s", drivers=[], process=["temperature"])
    train = np.arange(80) % 2 == 0
    pred = models.process_fit(feats, log_flux, train, sites, setup)
    assert pred == pytest.approx(log_flux, abs=2e-3)  # the penalty shrinks slopes by ~0.1 %


def test_shared_slopes_with_site_levels_predict_a_short_record(lib):
    _, models = lib
    temperature = np.tile(np.linspace(0.0, 20.0, 30), 2)
    sites = np.repeat(["long", "short"], 30)
    log_flux = np.where(sites == "long", 1.0, 3.0) + 0.1 * temperature
    train = (sites == "long") | (np.arange(60) < 35)  # the short site: its first 5 days only
    setup = models.Setup(target="fch4_nmol_m2_s", drivers=[], process=["temperature"])
    pred = models.shared_fit(pd.DataFrame({"temperature": temperature}), log_flux, train, sites, setup)
    assert pred == pytest.approx(log_flux, abs=0.05)  # shrunk shared slope, exact site levels


def test_edge_correction_keeps_known_days_and_decays_into_a_gap(lib):
    _, models = lib
    known = np.ones(40, dtype=bool)
    known[20] = False
    resid = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)  # lag-1 correlation -1 -> phi clipped to 0
    corrected = models.edge_correction(resid, known)
    assert corrected[known] == pytest.approx(resid[known])
    assert corrected[20] == pytest.approx(0.0)  # uncorrelated residuals say nothing about the gap
    smooth = np.sin(np.arange(40) / 6.0)  # strongly autocorrelated: the gap is pulled to its edges
    filled = models.edge_correction(smooth, known)
    assert filled[20] == pytest.approx((smooth[19] + smooth[21]) / 2, abs=0.01)  # phi near 1: the mean


def test_pseudo_gaps_hide_observed_days_only_about_the_share(lib):
    _, models = lib
    frame = pd.DataFrame({"site_id": np.repeat(["a", "b"], 200),
                          "fch4_nmol_m2_s": np.where(np.arange(400) % 10 == 0, np.nan, 1.0)})
    hidden = models.pseudo_gaps(frame, "fch4_nmol_m2_s", 0.2, (3, 6), seed=1)
    assert not hidden[frame["fch4_nmol_m2_s"].isna().to_numpy()].any()
    for site in ("a", "b"):
        share = hidden[frame["site_id"] == site].sum() / 180
        assert 0.2 <= share <= 0.2 + 6 / 180
