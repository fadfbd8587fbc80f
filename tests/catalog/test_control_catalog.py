"""The `control` catalog: the tasks as data, and known answers of its annotator library.

- The catalog as data: the 12 tasks load with the categories and difficulties declared for the
  control set, name only known scopes, render prompts free of citations, stage a hidden label
  (`component`, `driver`, `family`) only where it is the task's `labels` truth, and grade every
  metric against reference models.
- Known answers: the library's functions on hand-made inputs whose right answer follows from their
  construction (two separated groups, an exact line, an AR(1) model with known coefficients).
"""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
import pytest
from scibench_testing.annotators import CATALOG
from scibench_testing.catalog_domains import (
    assert_domain_shape,
    assert_graded_on_known_scopes,
    assert_prompt_clean,
    import_library,
    load_domain_tasks,
)

from stages.catalog import CatalogTask, load_scopes
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope

DOMAIN = CATALOG / "control"
LIBRARY = DOMAIN / "annotator_lib"
CATEGORIES = {"clustering": 2, "prediction_modeling": 2, "forecasting": 2, "missing_value_imputation": 1,
              "feature_analysis": 1, "sampling": 1, "exploratory_analysis": 1, "model_comparison": 1,
              "novel_metrics": 1}
DIFFICULTIES = {"easy": 5, "medium": 7}
HIDDEN_LABELS = {"component", "driver", "family"}
AUTHORS = ("Lloyd", "Rousseeuw", "Hubert", "Arabie", "Box", "Jenkins", "Breiman", "Tibshirani", "Cochran",
           "Tukey", "Ljung", "Harvey")


@pytest.fixture(scope="module")
def tasks() -> dict[str, CatalogTask]:
    return load_domain_tasks(DOMAIN)


@pytest.fixture(scope="module")
def lib():
    """The annotator library modules, imported as the annotator imports them (flat, by name)."""
    yield from import_library(LIBRARY, "control_annotator", "control_series")


# --- the catalog as data --------------------------------------------------------------------------

def test_the_control_set_has_its_categories_and_difficulties(tasks):
    assert_domain_shape(tasks, "control", 12, CATEGORIES, DIFFICULTIES)


def test_every_task_is_a_graded_metric_task_on_known_scopes(tasks):
    assert_graded_on_known_scopes(tasks, DOMAIN, min_scopes=20)


def test_prompts_render_without_citations_or_placeholders(tasks):
    scope = ResolvedScope("s", "attribute", "series of the linear-model family", "", "series_id",
                          ("S0001", "S0002", "S0003"), date(2000, 1, 1), date(2002, 12, 31))
    for task in tasks.values():
        assert_prompt_clean(render_prompt(task.spec, scope, "q-test"), AUTHORS, task.spec.id)


def test_hidden_labels_are_staged_only_as_the_labels_truth(tasks):
    for task in tasks.values():
        staged = {c for columns in task.spec.data.tables.values() for c in columns}
        truth = task.spec.truth
        expected = {truth.column} if truth.kind == "labels" else set()
        assert staged & HIDDEN_LABELS == expected, task.spec.id
        assert truth.column not in task.spec.artifact.columns, task.spec.id  # the grader joins on both


def test_family_scopes_fit_the_tasks_that_use_them(tasks):
    families = {"mixture_": {"mixture"}, "linear_": {"linear"}, "ar_noise_": {"ar", "noise"},
                "typed_": {"noise", "ar", "linear"}}
    scopes = load_scopes(DOMAIN)
    uses = {"control-mixture-components": {"mixture"}, "control-stratified-estimation": {"mixture"},
            "control-driver-attribution": {"linear"}, "control-series-types": {"noise", "ar", "linear"},
            "control-forecastability": {"ar", "noise"}}
    for task_id, wanted in uses.items():
        for name in tasks[task_id].spec.scopes:
            prefix = next(p for p in families if name.startswith(p))
            assert set(scopes[name].entities["family"]) == families[prefix] == wanted, (task_id, name)


# --- known answers of the library -----------------------------------------------------------------

def test_statistics_match_their_definitions(lib):
    annotator, _ = lib
    assert annotator.lag1(np.array([1.0, 2.0, 3.0, 4.0])) == pytest.approx(1.0)
    assert annotator.lag1(np.full(5, 3.0)) == 0.0
    scaled = annotator.zscore(pd.DataFrame({"a": [1.0, 3.0], "b": [5.0, 5.0]}))
    assert scaled["a"].tolist() == [-1.0, 1.0] and scaled["b"].tolist() == [0.0, 0.0]


def test_profile_counts_month_means_and_ignores_gaps(lib):
    annotator, _ = lib
    dates = pd.Series(pd.date_range("2001-01-01", "2001-02-28"))
    values = pd.Series(np.where(dates.dt.month == 1, 1.0, 4.0))
    values.iloc[3] = np.nan
    features = annotator.profile(dates, values)
    assert features["seasonal_amplitude"] == 3.0
    assert features["mean"] == pytest.approx((30 * 1.0 + 28 * 4.0) / 58)


def test_adjusted_rand_and_silhouette_have_their_exact_values(lib):
    annotator, _ = lib
    assert annotator.adjusted_rand(np.array([0, 0, 1, 1]), np.array([0, 0, 1, 2])) == pytest.approx(4 / 7)
    assert annotator.adjusted_rand(np.array([0, 0, 1, 1]), np.array([5, 5, 3, 3])) == 1.0
    x = np.array([[0.0], [1.0], [10.0], [11.0]])
    # a = 1 for every point; b = 10.5, 9.5, 9.5, 10.5: s = 9.5 / 10.5, 8.5 / 9.5, 8.5 / 9.5, 9.5 / 10.5
    assert annotator.silhouette(x, np.array([0, 0, 1, 1])) == pytest.approx((9.5 / 10.5 + 8.5 / 9.5) / 2)


def test_kmeans_and_best_partition_find_two_separated_groups(lib):
    annotator, _ = lib
    rng = np.random.default_rng(3)
    x = np.r_[rng.normal(0.0, 0.1, (6, 2)), rng.normal(5.0, 0.1, (6, 2))]
    labels, score = annotator.best_partition(pd.DataFrame(x))
    assert annotator.adjusted_rand(labels, np.repeat([0, 1], 6)) == 1.0 and score > 0.9
    assert annotator.kmeans(x, 2).tolist() == annotator.kmeans(x, 2).tolist()  # seeded


def test_ols_and_the_driver_fit_recover_an_exact_line(lib):
    annotator, _ = lib
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 5))
    y = 1.0 + 2.0 * x[:, 2]
    np.testing.assert_allclose(annotator.ols(x, y), [1.0, 0, 0, 2.0, 0, 0], atol=1e-12)
    frame = pd.DataFrame(x, columns=annotator.DRIVERS).assign(y=y + 0.01 * rng.standard_normal(200))
    _, r2, p_value = annotator.driver_fit(frame)
    assert r2 > 0.99 and p_value < 1e-100


def test_autocovariance_of_ar_processes(lib):
    _, series = lib
    np.testing.assert_allclose(series.autocovariance(np.array([0.5]), 1.0, 3), [4 / 3, 2 / 3, 1 / 3, 1 / 6])
    # AR(2) with phi = (1, -0.5), unit innovations: gamma(0) = 2.4, gamma(1) = 1.6, then the recursion
    np.testing.assert_allclose(series.autocovariance(np.array([1.0, -0.5]), 1.0, 3), [2.4, 1.6, 0.4, -0.4])
    assert series.stationary(np.array([0.5])) and not series.stationary(np.array([1.2]))


def model(series, phi: list[float]):
    return series.SeriesModel(("const",), np.array([10.0]), np.array(phi), 1.0, pd.Timestamp("2000-01-01"))


def test_forecast_runs_the_ar_recursion_from_the_last_residual(lib):
    _, series = lib
    history = pd.DataFrame({"date": pd.date_range("2000-01-01", periods=3), "y": [10.0, 10.0, 12.0]})
    dates = pd.Series(pd.date_range("2000-01-04", periods=3))
    np.testing.assert_allclose(series.forecast(model(series, [0.5]), history, dates), [11.0, 10.5, 10.25])
    np.testing.assert_allclose(series.forecast(model(series, []), history, dates), [10.0, 10.0, 10.0])


def test_one_missing_day_of_an_ar1_gets_its_conditional_mean(lib):
    _, series = lib
    dates = pd.Series(pd.date_range("2000-01-01", periods=5))
    values = np.array([10.0, 12.0, np.nan, 14.0, 10.0])
    filled = series.fill_gaps(model(series, [0.5]), dates, values)
    # E[r_t | r_(t-1) = 2, r_(t+1) = 4] = phi (2 + 4) / (1 + phi^2)
    assert filled[2] == pytest.approx(10.0 + 0.5 * 6.0 / 1.25)
    assert series.fill_gaps(model(series, []), dates, values)[2] == 10.0  # white noise: the mean


def test_fit_series_keeps_white_noise_at_its_mean_and_finds_an_ar1(lib):
    _, series = lib
    dates = pd.Series(pd.date_range("2000-01-01", periods=1500))
    rng = np.random.default_rng(7)
    noise = series.fit_series(dates, 5.0 + rng.standard_normal(1500))
    assert noise.terms == ("const",) and len(noise.phi) == 0
    z = np.zeros(1500)
    for t in range(1, 1500):
        z[t] = 0.8 * z[t - 1] + rng.standard_normal()
    fitted = series.fit_series(dates, 5.0 + z)
    assert len(fitted.phi) >= 1 and fitted.phi[0] == pytest.approx(0.8, abs=0.05)


def test_harmonic_fit_recovers_an_exact_annual_cycle(lib):
    _, series = lib
    dates = pd.Series(pd.date_range("2001-01-01", "2002-12-31"))
    angle = 2 * np.pi * dates.dt.day_of_year.to_numpy() / 365.25
    values = 3.0 + 2.0 * np.sin(angle) - 1.0 * np.cos(angle)
    np.testing.assert_allclose(series.harmonic_fit(dates, values), [3.0, 2.0, -1.0], atol=1e-9)
