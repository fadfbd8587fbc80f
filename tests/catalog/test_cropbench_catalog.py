"""The `cropbench` catalog: the tasks as data, and known answers of its annotator library.

- The catalog as data: the 24 tasks load, carry the categories and difficulties declared for the
  domain, name only known scopes, render prompts free of citations, and never stage a column that
  would leak the target (production next to yield, an interpolated satellite series next to the
  composites it was interpolated from).
- Known answers: the library's functions on hand-made frames whose right answer follows from
  their construction (degree days counted by hand, an exactly additive county x year table, a
  county that copies another, two separated groups).
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

from stages.catalog import CatalogTask
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope

DOMAIN = CATALOG / "cropbench"
LIBRARY = DOMAIN / "annotator_lib"
CATEGORIES = {
    "prediction_modeling": 3, "forecasting": 2, "feature_analysis": 2, "feature_label_correlation": 3,
    "model_comparison": 2, "clustering": 2, "sampling": 2, "cross_dataset_evaluation": 1,
    "data_augmentation": 1, "performance_stratification": 1, "transfer_learning": 1,
    "up_downscaling": 1, "model_distillation": 1, "missing_value_imputation": 1, "novel_metrics": 1,
}
DIFFICULTIES = {"easy": 4, "medium": 12, "hard": 8}
AUTHORS = ("Khaki", "Kallenberg", "Paudel", "Schlenker", "Lobell", "Burke", "Schauberger",
           "Shahhosseini", "Jiang", "Franke", "Troy", "You, Li", "Lloyd", "Rousseeuw", "Breiman",
           "Efron", "Troyanskaya", "Gupta")
# Columns derived from a target: staging one next to the target would hand the answer over.
DERIVED = {"yield_t_ha": {"production_t"}, "production_t": {"yield_t_ha"},
           "ndvi": {"ndvi_interp"}, "fpar_pct": {"fpar_interp_pct"}}


@pytest.fixture(scope="module")
def tasks() -> dict[str, CatalogTask]:
    return load_domain_tasks(DOMAIN)


@pytest.fixture(scope="module")
def lib():
    """The annotator library modules, imported as the annotator imports them (flat, by name)."""
    yield from import_library(LIBRARY, "cropbench_annotator", "cropbench_models")


# --- the catalog as data --------------------------------------------------------------------------

def test_the_domain_has_its_share_of_categories_and_difficulties(tasks):
    assert_domain_shape(tasks, "cropbench", 24, CATEGORIES, DIFFICULTIES)


def test_every_task_is_a_graded_metric_task_on_known_scopes(tasks):
    assert_graded_on_known_scopes(tasks, DOMAIN)


def test_prompts_render_without_citations(tasks):
    scope = ResolvedScope("s", "geographic", "maize counties of Iowa", "", "adm_id",
                          ("US-19-001", "US-19-003"), date(1999, 1, 1), date(2018, 12, 31))
    for task in tasks.values():
        prompt = render_prompt(task.spec, scope).replace("Kling-Gupta", "KGE")  # a metric's name
        assert_prompt_clean(prompt, AUTHORS, task.spec.id)


def test_no_task_stages_a_column_derived_from_its_target(tasks):
    for task in tasks.values():
        staged = {c for columns in task.spec.data.tables.values() for c in columns}
        assert not DERIVED.get(task.spec.truth.column, set()) & staged, task.spec.id
        assert task.spec.truth.column in task.spec.data.tables[task.spec.truth.table], task.spec.id


def test_annual_truths_use_the_harvest_year(tasks):
    for task in tasks.values():
        truth = task.spec.truth
        assert (truth.time == "harvest_year") == (truth.table == "yields"), task.spec.id


# --- known answers of the library -----------------------------------------------------------------

def test_season_features_count_degree_days_inside_the_calendar_window(lib):
    annotator, _ = lib
    dates = pd.date_range("2010-01-01", "2010-12-31")
    doy = dates.day_of_year.to_numpy()
    tmax = np.where((doy >= 130) & (doy < 140), 34.0, 25.0)  # ten hot days just after sowing
    series = pd.DataFrame({"adm_id": "A", "date": dates, "tmin_c": tmax - 10, "tmax_c": tmax,
                           "prec_mm_d": np.where(doy % 10 == 0, 5.0, 0.0)})
    features = annotator.season_features(series, pd.Series({"A": 120.0})).loc[("A", 2010)]
    assert features["edd"] == pytest.approx(10 * 4.0)  # (34 - 30) on the ten hot days
    # season = days 120..249: 10 days at tavg 29 (19 degree days) and 120 at tavg 20 (10)
    assert features["gdd"] == pytest.approx(10 * 19 + 120 * 10)
    assert features["season_prec"] == pytest.approx(13 * 5.0)  # days 120, 130, ..., 240
    assert features["days_tmax_band4"] == 10 and features["days_tmax_band2"] == 120  # 25 degC: 25-29


def test_panel_model_recovers_county_levels_and_a_common_trend(lib):
    _, models = lib
    years = np.arange(2000, 2012)
    panel = pd.DataFrame([(c, y, level + 0.1 * (y - 2000)) for c, level in (("A", 8.0), ("B", 10.0))
                          for y in years], columns=["adm_id", "harvest_year", "yield_t_ha"])
    test = (panel["harvest_year"] >= 2010).to_numpy()
    predicted = models.panel_fit_predict(panel, ~test, test, "yield_t_ha", [], learner=None, alpha=0.0)
    np.testing.assert_allclose(predicted, panel.loc[test, "yield_t_ha"], atol=1e-9)


def test_additive_fill_is_exact_on_an_additive_table(lib):
    _, models = lib
    county = {"A": 0.0, "B": 1.0, "C": -2.0}
    year = {2000: 0.5, 2001: -1.0, 2002: 2.0, 2003: 0.0}
    panel = pd.DataFrame([(c, y, 9.0 + a + b) for c, a in county.items() for y, b in year.items()],
                         columns=["adm_id", "harvest_year", "yield_t_ha"])
    observed = ~((panel["adm_id"] == "B") & (panel["harvest_year"] == 2002)).to_numpy()
    filled = models.additive_fill(panel, observed, "yield_t_ha", [], sweeps=200)
    assert filled[~observed][0] == pytest.approx(9.0 + 1.0 + 2.0, abs=1e-6)


def test_knn_fill_takes_the_anomaly_of_a_county_that_moves_in_step(lib):
    _, models = lib
    anomaly = np.array([1.0, -1.0, 2.0, 0.0, -2.0, 0.5, -0.5, 0.0])
    years = np.arange(2000, 2008)
    rows = [("A", y, 10 + a) for y, a in zip(years, anomaly, strict=True)]
    rows += [("B", y, 8 + a) for y, a in zip(years, anomaly, strict=True)]
    panel = pd.DataFrame(rows, columns=["adm_id", "harvest_year", "yield_t_ha"])
    observed = ~((panel["adm_id"] == "B") & (panel["harvest_year"] == 2002)).to_numpy()
    filled = models.knn_fill(panel, observed, "yield_t_ha")
    b_mean = (8 * 7 + anomaly.sum() - 2.0) / 7  # B's mean over its seven reported years
    a_anomaly = 2.0 - anomaly.mean()  # A's 2002 departure from its own mean
    assert filled[~observed][0] == pytest.approx(b_mean + a_anomaly)


def test_profile_space_and_kmeans_separate_two_obvious_groups(lib):
    _, models = lib
    times = pd.to_datetime([f"{y}-01-01" for y in range(2000, 2010)])
    rng = np.random.default_rng(0)
    frames = [pd.DataFrame({"adm_id": f"{g}{i}", "time": times,
                            "yield_t_ha": level + rng.normal(0, 0.1, len(times))})
              for g, level in (("low", 5.0), ("high", 11.0)) for i in range(4)]
    space = models.profile_space(pd.concat(frames), "time", "yield_t_ha", ["mean", "cv"])
    assert space["mean"].std(ddof=0) == pytest.approx(1.0)
    labels, score = models.best_kmeans(space)
    groups = dict(zip(space.index, labels, strict=True))
    assert len({groups[f"low{i}"] for i in range(4)}) == 1 and groups["low0"] != groups["high0"]
    assert score > 0.5
