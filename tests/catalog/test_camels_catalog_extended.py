"""The camels tasks after the first five: the catalog as declared, and known answers of the
annotator library's shared functions (`camels_annotator`, `camels_models`) on hand-made frames.

The first five tasks are specified in test_camels_tasks.py and test_camels_known_answers.py.
"""

from __future__ import annotations

import re
import sys
from datetime import date

import numpy as np
import pandas as pd
import pytest
from scibench_testing.annotators import ANNOTATOR_PATH, CATALOG, KEY
from sklearn.metrics import silhouette_score

from stages.catalog import load_catalog, load_scopes
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.evaluation.agents.scripts.reference_models import MODELS
from stages.scoring.query.metrics import METRICS

sys.path[:0] = list(map(str, ANNOTATOR_PATH))
import camels_annotator as annotator  # noqa: E402
import camels_models as models  # noqa: E402

FIRST_FIVE = {"camels-aridity-runoff", "camels-gap-filling", "camels-model-comparison",
              "camels-signature-clustering", "camels-streamflow-prediction"}
CATEGORIES = {  # task id -> (category, difficulty, truth kind)
    "camels-single-vs-regional": ("sampling", "medium", "holdout"),
    "camels-limited-training-data": ("sampling", "hard", "holdout"),
    "camels-regional-finetune": ("transfer_learning", "medium", "holdout"),
    "camels-sparse-record-transfer": ("transfer_learning", "hard", "holdout"),
    "camels-forcing-fusion": ("data_augmentation", "medium", "holdout"),
    "camels-distilled-emulator": ("model_distillation", "hard", "holdout"),
    "camels-missing-precipitation": ("missing_value_imputation", "hard", "hidden_gaps"),
    "camels-kge-components": ("novel_metrics", "medium", "holdout"),
    "camels-high-flow-bias": ("novel_metrics", "medium", "holdout"),
    "camels-extreme-event-skill": ("performance_stratification", "hard", "holdout"),
    "camels-conceptual-by-regime": ("performance_stratification", "easy", "holdout"),
    "camels-multi-timescale": ("up_downscaling", "hard", "holdout"),
    "camels-ungauged-basins": ("cross_dataset_evaluation", "hard", "held_out_entities"),
    "camels-sparse-gauge-network": ("cross_dataset_evaluation", "medium", "held_out_entities"),
    "camels-signature-predictability": ("feature_analysis", "medium", "held_out_entities"),
    "camels-seasonality-translation": ("feature_analysis", "medium", "held_out_entities"),
    "camels-autoregressive-nowcast": ("forecasting", "medium", "holdout"),
    "camels-lagged-flow-forecast": ("forecasting", "medium", "holdout"),
    "camels-regime-clusters": ("clustering", "easy", "profiles"),
    "camels-climate-regimes": ("exploratory_analysis", "easy", "profiles"),
}
STREAMFLOW_SIGNATURES = {"q_mean_mm_d", "runoff_ratio", "slope_fdc", "baseflow_index", "stream_elas",
                         "q5_mm_d", "q95_mm_d", "high_q_freq_d_yr", "high_q_dur_d", "low_q_freq_d_yr",
                         "low_q_dur_d", "zero_q_freq", "hfd_mean_d", "qobs_cfs"}


@pytest.fixture(scope="module")
def extended():
    """Every camels task after the first five, as the checkout holds them."""
    return {task.spec.id: task for task in load_catalog(CATALOG, ["camels"]) if task.spec.id not in FIRST_FIVE}


# --- the catalog as declared ----------------------------------------------------------------------


def test_every_later_task_is_declared_with_its_category_difficulty_and_truth(extended):
    assert set(extended) == set(CATEGORIES)
    for task_id, task in extended.items():
        category, difficulty, truth = CATEGORIES[task_id]
        assert (task.spec.category, task.spec.difficulty, task.spec.truth.kind) == (category, difficulty, truth)
        assert task.spec.domain == "camels" and task.spec.data.repository == "camels"


def test_every_metric_is_graded_against_known_references(extended):
    for task in extended.values():
        assert task.spec.reference_models and set(task.spec.reference_models) <= set(MODELS)
        for metric in task.spec.answer.metrics:
            assert metric.grade is not None and metric.references, (task.spec.id, metric.name)
            assert metric.grade.function in (*METRICS, "silhouette"), metric.name
            assert metric.grade.column in task.spec.artifact.columns


def test_every_task_lists_twenty_scopes_from_the_library(extended):
    library = load_scopes(CATALOG / "camels")
    for task in extended.values():
        assert len(task.spec.scopes) >= 20, task.spec.id
        assert set(task.spec.scopes) <= set(library)
        assert len(set(task.spec.scopes)) == len(task.spec.scopes)


def test_prompts_render_without_citation_and_stage_no_target_signature(extended):
    scope = ResolvedScope("s", "temporal", "all basins", "", KEY, ("01000001", "01000002", "01000003"),
                          date(2000, 1, 1), date(2002, 12, 31))
    for task in extended.values():
        prompt = render_prompt(task.spec, scope, "q-test")
        assert "$" not in prompt, task.spec.id
        author = task.spec.source.citation.split(",")[0].strip()  # a metric may keep the name (Kling-Gupta)
        assert not re.search(rf"\b{author}\b[^.\n]{{0,20}}(et al|\(?(19|20)\d\d\b)", prompt), task.spec.id
        assert task.spec.source.doi is None or task.spec.source.doi not in prompt
        assert "doi" not in prompt.lower() and "et al" not in prompt
        staged = {c for columns in task.spec.data.tables.values() for c in columns}
        assert not staged & STREAMFLOW_SIGNATURES, task.spec.id


# --- known answers of the library -----------------------------------------------------------------


def test_basin_profile_of_a_four_day_ramp():
    dates = pd.Series(pd.date_range("2001-01-01", periods=4))
    profile = annotator.basin_profile(dates, pd.Series([1.0, 2.0, np.nan, 4.0, ]).reindex(range(4)))
    # Observed values 1, 2, 4 on days 0, 1, 3.
    assert profile["mean"] == pytest.approx(7 / 3)
    assert profile["std"] == pytest.approx(np.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 3))
    assert profile["q10"] == pytest.approx(1.2) and profile["q90"] == pytest.approx(3.6)
    assert profile["lag1"] == pytest.approx(1.0)  # (1, 2) against (2, 4): a straight line
    assert profile["seasonal_amplitude"] == 0.0  # one calendar month
    slope_per_day = np.polyfit([0, 1, 3], [1, 2, 4], 1)[0]
    assert profile["trend"] == pytest.approx(slope_per_day * 365.25)


def test_profile_space_standardises_and_zeroes_constant_features():
    dates = pd.date_range("2001-01-01", periods=3)
    frame = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 3, "date": list(dates) * 2,
                          "v": [1.0, 1.0, 1.0, 3.0, 3.0, 3.0]})
    space = annotator.profile_space(frame, "g", "v", ["mean", "std"])
    assert space.loc["a", "mean"] == -1.0 and space.loc["b", "mean"] == 1.0
    assert (space["std"] == 0.0).all()  # zero spread across basins


def test_best_partition_splits_two_separated_groups():
    space = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [5.0, 5.0], [5.1, 5.0], [5.0, 5.1]])
    labels, score = annotator.best_partition(space)
    assert len(set(labels[:3])) == 1 and len(set(labels[3:])) == 1 and labels[0] != labels[3]
    assert score == pytest.approx(silhouette_score(space, labels))


def test_others_mean_leaves_the_basin_itself_and_other_groups_out():
    frame = pd.DataFrame({"g": ["a", "b", "c", "a", "b", "c"],
                          "date": pd.to_datetime(["2001-01-01"] * 3 + ["2001-01-02"] * 3),
                          "p": [1.0, 3.0, 8.0, 2.0, np.nan, 6.0]})
    everyone = models.others_mean(frame, "g", "p")
    np.testing.assert_allclose(everyone, [5.5, 4.5, 2.0, 6.0, 4.0, 2.0])
    regions = pd.Series({"a": "01", "b": "01", "c": "03"})
    same_region = models.others_mean(frame, "g", "p", regions)
    np.testing.assert_allclose(same_region, [3.0, 1.0, np.nan, np.nan, 2.0, np.nan])


def test_validation_split_keeps_the_last_fifth_of_the_training_days():
    dates = pd.Series(pd.date_range("2001-01-01", periods=10))
    train = np.array([True] * 10)
    early, late = models.validation_split(dates, train)
    assert early.sum() == 8 and late.tolist() == [False] * 8 + [True] * 2


def test_scores_of_a_perfect_and_of_a_damped_simulation():
    obs = np.array([1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0])
    sim = np.concatenate([obs[:4], 2.5 + 0.5 * (obs[4:] - 2.5)])
    table = models.scores(obs, sim, np.array(["a"] * 4 + ["b"] * 4))
    assert table.loc["a", "nse"] == 1.0 and table.loc["a", "kge"] == pytest.approx(1.0)
    assert table.loc["b", "r2"] == pytest.approx(1.0)
    assert table.loc["b", "variability_error"] == pytest.approx(0.5)
    assert table.loc["b", "nse"] == pytest.approx(1 - 0.25)  # (0.5 d)^2 over d^2


def test_pseudo_ungauged_draws_a_share_of_the_public_basins():
    basins = np.repeat(np.array(["a", "b", "c", "d", "e"]), 2)
    public = basins != "e"
    chosen = models.pseudo_ungauged(basins, public, share=0.5)
    picked = set(basins[chosen])
    assert len(picked) == 2 and "e" not in picked
    assert np.array_equal(chosen, np.isin(basins, sorted(picked)))


def test_binned_features_give_the_booster_its_own_unweighted_bins():
    rng = np.random.default_rng(0)
    fit = pd.DataFrame({"x": rng.normal(size=600), "few": rng.integers(0, 4, 600).astype(float)})
    fit.loc[::50, "x"] = np.nan
    predict = pd.DataFrame({"x": [-9.0, 0.0, np.nan, 9.0], "few": [0.0, 1.0, 2.0, 3.0]})
    y = np.nan_to_num(fit["x"].to_numpy()) + fit["few"].to_numpy()
    fit_bins, predict_bins = models.binned(fit, predict)
    assert fit_bins["few"].equals(fit["few"])  # 4 distinct values: left as they are
    assert fit_bins["x"].isna().sum() == 12 and fit_bins["x"].nunique() == 255
    assert predict_bins["x"].iloc[0] == 0 and predict_bins["x"].iloc[3] == 254  # 254 edges
    plain = models.boosted(max_iter=30).fit(fit, y).predict(predict)
    binned = models.boosted(max_iter=30).fit(fit_bins, y).predict(predict_bins)
    assert np.array_equal(plain, binned)
