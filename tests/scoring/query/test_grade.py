"""grade_artifact: the harness's metrics, recomputed from an artifact against the hidden truth."""

from __future__ import annotations

import math
from datetime import date

import pandas as pd
import pytest
from scibench_testing.graded import CLUSTERS, days, graded_task, metric

from stages.catalog import MetricSpec, TruthSpec
from stages.scoring.query.grade import Grades, align, grade_aligned, grade_artifact

DATES = days(date(2000, 1, 8), 4)
# Two basins x 4 test days. a: obs 1..4, sim off by 1 on the last day; b: obs 2..8, off on the first.
TRUTH = pd.DataFrame({"gauge_id": ["a"] * 4 + ["b"] * 4, "date": DATES * 2,
                      "qobs_mm_d": [1.0, 2.0, 3.0, 4.0, 2.0, 4.0, 6.0, 8.0]})
ARTIFACT = pd.DataFrame({"gauge_id": ["a"] * 4 + ["b"] * 4, "date": DATES * 2,
                         "qsim_mm_d": [1.0, 2.0, 3.0, 5.0, 3.0, 4.0, 6.0, 8.0]})

# By hand. a: mean(obs) 2.5, SS_tot 5, SS_res 1 -> NSE 0.8; b: mean 5, SS_tot 20, SS_res 1 -> 0.95.
NSE_A, NSE_B = 0.8, 0.95
# a: dobs (-1.5, -0.5, 0.5, 1.5), dsim (-1.75, -0.75, 0.25, 2.25): r = 6.5 / sqrt(5 * 8.75),
# alpha = sqrt(8.75 / 5), beta = 2.75 / 2.5. b: dobs (-3, -1, 1, 3), dsim (-2.25, -1.25, 0.75, 2.75):
# r = 17 / sqrt(20 * 14.75), alpha = sqrt(14.75 / 20), beta = 5.25 / 5.
KGE_A = 1 - math.sqrt((6.5 / math.sqrt(43.75) - 1) ** 2 + (math.sqrt(1.75) - 1) ** 2 + 0.1**2)
KGE_B = 1 - math.sqrt((17 / math.sqrt(295) - 1) ** 2 + (math.sqrt(0.7375) - 1) ** 2 + 0.05**2)


def grade(metrics: list[MetricSpec], artifact: pd.DataFrame = ARTIFACT, truth: pd.DataFrame = TRUTH,
          **task) -> Grades:
    return grade_artifact(graded_task(metrics, **task), artifact, truth, "gauge_id")


def test_nse_and_kge_are_the_median_across_basins_of_the_per_basin_values():
    grades = grade([metric("nse", "nse", "qsim_mm_d", "median"), metric("kge", "kge", "qsim_mm_d", "median")])
    assert grades.values == {"nse": pytest.approx((NSE_A + NSE_B) / 2), "kge": pytest.approx((KGE_A + KGE_B) / 2)}
    assert grades.undefined == {}


def test_median_and_mean_differ_with_a_third_basin():
    # c: obs 1..4, sim its mean 2.5 everywhere -> NSE 0. Median (0, 0.8, 0.95) = 0.8, mean 0.58333.
    truth = pd.concat([TRUTH, TRUTH.iloc[:4].assign(gauge_id="c")], ignore_index=True)
    artifact = pd.concat([ARTIFACT, ARTIFACT.iloc[:4].assign(gauge_id="c", qsim_mm_d=2.5)], ignore_index=True)
    grades = grade([metric("median_nse", "nse", "qsim_mm_d", "median"),
                    metric("mean_nse", "nse", "qsim_mm_d", "mean")], artifact, truth)
    assert grades.values == {"median_nse": pytest.approx(0.8), "mean_nse": pytest.approx((0.8 + 0.95) / 3)}


def test_pooled_rmse_is_over_every_truth_row():
    # Errors (0, 0, 0, 1, 1, 0, 0, 0): sqrt(2 / 8) = 0.5. A per-basin median would be 0.5 too, so
    # check mae pooled as well: 2 / 8 = 0.25.
    grades = grade([metric("rmse", "rmse", "qsim_mm_d", "pooled", "lower is better"),
                    metric("mae", "mae", "qsim_mm_d", "pooled", "lower is better")])
    assert grades.values == {"rmse": 0.5, "mae": 0.25}


def test_artifact_rows_without_a_truth_row_are_not_graded():
    # A required day that was never observed is owed but has no truth: its value does not count.
    unobserved = pd.DataFrame({"gauge_id": ["a"], "date": [pd.Timestamp("2000-01-12")], "qsim_mm_d": [1e6]})
    grades = grade([metric("rmse", "rmse", "qsim_mm_d", "pooled", "lower is better")],
                   pd.concat([ARTIFACT, unobserved], ignore_index=True))
    assert grades.values == {"rmse": 0.5}


def test_a_basin_with_an_undefined_metric_is_left_out_of_the_median():
    # c's observations are constant: its NSE is undefined, the median is over a and b.
    truth = pd.concat([TRUTH, TRUTH.iloc[:4].assign(gauge_id="c", qobs_mm_d=3.0)], ignore_index=True)
    artifact = pd.concat([ARTIFACT, ARTIFACT.iloc[:4].assign(gauge_id="c")], ignore_index=True)
    grades = grade([metric("nse", "nse", "qsim_mm_d", "median")], artifact, truth)
    assert grades.values == {"nse": pytest.approx((NSE_A + NSE_B) / 2)}


def test_a_metric_undefined_on_every_basin_is_none_with_the_reason():
    truth = TRUTH.assign(qobs_mm_d=3.0)
    grades = grade([metric("nse", "nse", "qsim_mm_d", "median"),
                    metric("rmse", "rmse", "qsim_mm_d", "pooled", "lower is better")], truth=truth)
    assert grades.values == {"nse": None, "rmse": pytest.approx(math.sqrt((4 + 1 + 0 + 4 + 0 + 1 + 9 + 25) / 8))}
    assert grades.undefined == {"nse": "no entity has a defined nse"}


def test_a_pooled_metric_with_a_single_pair_is_undefined():
    grades = grade([metric("rmse", "rmse", "qsim_mm_d", "pooled", "lower is better")], truth=TRUTH.iloc[:1])
    assert grades.values == {"rmse": None}
    assert grades.undefined == {"rmse": "1 valid (non-NaN) pair(s); at least 2 are needed"}


def test_metrics_without_a_grade_are_not_recomputed():
    reported_only = MetricSpec(name="n_models", description="n", target="> 0")
    grades = grade([reported_only, metric("nse", "nse", "qsim_mm_d", "median")])
    assert list(grades.values) == ["nse"]


def test_one_alignment_grades_every_artifact_on_its_rows_as_grade_artifact_does():
    # Aligned once on the owed rows (truth shuffled: the join, not the order, decides), then two
    # artifacts on those rows, in that order: the grades are grade_artifact's, to the bit.
    task = graded_task([metric("nse", "nse", "qsim_mm_d", "median"),
                        metric("rmse", "rmse", "qsim_mm_d", "pooled", "lower is better")])
    truth = TRUTH.sample(frac=1.0, random_state=0)
    aligned = align(task, truth, ARTIFACT[["gauge_id", "date"]], "gauge_id")
    for artifact in (ARTIFACT, ARTIFACT.assign(qsim_mm_d=ARTIFACT["qsim_mm_d"] * 1.1)):
        assert grade_aligned(task, aligned, artifact) == grade_artifact(task, artifact, truth, "gauge_id")


def test_an_artifact_whose_rows_are_not_the_aligned_rows_is_refused():
    task = graded_task([metric("nse", "nse", "qsim_mm_d", "median")])
    aligned = align(task, TRUTH, ARTIFACT, "gauge_id")
    with pytest.raises(ValueError, match="not the rows the truth was aligned to"):
        grade_aligned(task, aligned, ARTIFACT.iloc[::-1].reset_index(drop=True))


# --- silhouette in the benchmark's feature space -------------------------------------------------

SIGNATURES = TruthSpec(kind="signatures", column="qobs_mm_d")
SILHOUETTE = metric("silhouette", "silhouette", "cluster")
# Four basins in a 2-D feature space: two tight pairs 10 apart.
FEATURES = pd.DataFrame({"gauge_id": ["a", "b", "c", "d"], "f1": [0.0, 0.0, 10.0, 10.0],
                         "f2": [0.0, 1.0, 0.0, 1.0]})


def grade_partition(labels: pd.DataFrame) -> Grades:
    task = graded_task([SILHOUETTE], artifact=CLUSTERS, truth=SIGNATURES)
    return grade_artifact(task, labels, FEATURES, "gauge_id")


def test_silhouette_is_computed_in_the_truths_feature_space_whatever_the_label_values():
    # Every point: a = 1 (its pair), b = (10 + sqrt(101)) / 2 (the other pair), s = 1 - a / b.
    labels = pd.DataFrame({"gauge_id": ["d", "c", "b", "a"], "cluster": [3, 3, 7, 7]})
    grades = grade_partition(labels)
    assert grades.values == {"silhouette": pytest.approx(1 - 2 / (10 + math.sqrt(101)))}


def test_a_partition_against_the_feature_space_scores_below_zero():
    # {a, c} and {b, d}: a = 10, b = mean(1, sqrt(101)) = 5.52494 for every point.
    labels = pd.DataFrame({"gauge_id": ["a", "b", "c", "d"], "cluster": [0, 1, 0, 1]})
    grades = grade_partition(labels)
    b = (1 + math.sqrt(101)) / 2
    assert grades.values == {"silhouette": pytest.approx((b - 10) / 10)}


def test_a_single_cluster_has_no_silhouette():
    labels = FEATURES[["gauge_id"]].assign(cluster=1)
    grades = grade_partition(labels)
    assert grades.values == {"silhouette": None}
    assert grades.undefined == {"silhouette": "1 distinct labels for 4 rows; silhouette needs 2 to n - 1"}
