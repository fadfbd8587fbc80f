import math

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, silhouette_score

from stages.scoring.query.entities import aggregate
from stages.scoring.query.metrics import (
    DIRECTION,
    LOWER_IS_BETTER,
    METRICS,
    KgeComponents,
    MetricUndefined,
    adjusted_rand,
    bias,
    kge,
    kge_components,
    mae,
    nse,
    r2,
    rmse,
    silhouette,
)

NUMERIC = ["nse", "kge", "rmse", "mae", "bias", "r2"]
NAN = float("nan")


def flows(seed: int, n: int = 50) -> np.ndarray:
    return np.random.default_rng(seed).gamma(2.0, 1.5, n)


# --- invariants -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_perfect_simulation_scores_exactly_one(seed):
    x = flows(seed)
    assert nse(x, x) == 1.0
    assert kge(x, x) == 1.0
    assert kge_components(x, x) == KgeComponents(r=1.0, alpha=1.0, beta=1.0)
    assert r2(x, x) == 1.0
    assert (rmse(x, x), mae(x, x), bias(x, x)) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_mean_flow_benchmark_scores_nse_zero_and_kge_one_minus_sqrt_two(seed):
    x = flows(seed)
    mean_flow = np.full_like(x, x.mean())
    assert nse(x, mean_flow) == 0.0
    # A constant sim: r = 0 (by definition), alpha = 0/std = 0, beta = mean/mean = 1.
    assert kge_components(x, mean_flow) == KgeComponents(r=0.0, alpha=0.0, beta=1.0)
    assert kge(x, mean_flow) == 1 - math.sqrt(2)
    assert r2(x, mean_flow) == 0.0


def test_every_metric_returns_a_python_float():
    obs, sim = [1.0, 1.0, 2.0, 4.0], [1.0, 3.0, 3.0, 5.0]
    for name, metric in METRICS.items():
        assert type(metric(obs, sim)) is float, name
    assert type(silhouette([[0.0], [1.0], [4.0]], [0, 0, 1])) is float
    assert type(aggregate(np.array([1.0, 2.0]), "mean")) is float


# --- hand-computed values -------------------------------------------------------------------------


def test_nse_by_hand():
    # mean(obs) = 2.5; Σ(obs - 2.5)² = 2.25 + 0.25 + 0.25 + 2.25 = 5; Σ(sim - obs)² = 0+0+0+2² = 4
    assert nse([1, 2, 3, 4], [1, 2, 3, 6]) == pytest.approx(1 - 4 / 5, abs=1e-15)
    # sim = obs reversed: Σ(sim - obs)² = 9 + 1 + 1 + 9 = 20 -> 1 - 20/5 = -3
    assert nse([1, 2, 3, 4], [4, 3, 2, 1]) == -3.0


def test_kge_by_hand():
    obs = [1.0, 2.0, 3.0, 4.0]
    # sim = 2·obs: r = 1, alpha = 2, beta = 5/2.5 = 2 -> 1 - sqrt(0 + 1 + 1)
    assert kge_components(obs, [2, 4, 6, 8]) == KgeComponents(r=1.0, alpha=2.0, beta=2.0)
    assert kge(obs, [2, 4, 6, 8]) == 1 - math.sqrt(2)
    # sim = obs + 1: r = 1, alpha = 1, beta = 3.5/2.5 = 1.4 -> 1 - 0.4
    assert kge(obs, [2, 3, 4, 5]) == pytest.approx(0.6, abs=1e-15)
    # sim = obs reversed: r = -5/sqrt(5·5) = -1, alpha = 1, beta = 1 -> 1 - sqrt(4)
    assert kge_components(obs, [4, 3, 2, 1]) == KgeComponents(r=-1.0, alpha=1.0, beta=1.0)
    assert kge(obs, [4, 3, 2, 1]) == -1.0


def test_error_metrics_by_hand():
    obs, sim = [0, 0, 0, 0], [3, -4, 0, 0]
    assert rmse(obs, sim) == 2.5  # sqrt((9 + 16 + 0 + 0) / 4)
    assert mae(obs, sim) == 1.75  # (3 + 4 + 0 + 0) / 4
    assert bias(obs, sim) == -0.25  # (3 - 4 + 0 + 0) / 4


def test_r2_is_squared_correlation_not_nse():
    # sim = 2·obs + 5 is perfectly correlated but biased: r² = 1 while NSE is far below 0.
    obs = np.array([1.0, 2.0, 3.0, 4.0])
    assert r2(obs, 2 * obs + 5) == 1.0
    assert nse(obs, 2 * obs + 5) < 0
    # d_obs = [-1, 0, 1], d_sim = [-1, 1, 0]: r = 1 / sqrt(2 · 2) = 0.5, r² = 0.25
    assert r2([1, 2, 3], [1, 3, 2]) == 0.25


def test_rounding_never_puts_r_outside_minus_one_to_one():
    # sim is an exact linear function of obs; unclipped, r = 1.0000000000000002 in floating point.
    obs, sim = [-0.0066519467348661356, 0.0035151007009301973], [-0.7497528973250855, -0.7401946224162553]
    assert kge_components(obs, sim).r == 1.0
    assert r2(obs, sim) == 1.0


# --- NaN pairs, shapes, undefined -----------------------------------------------------------------


@pytest.mark.parametrize("name", NUMERIC)
def test_pairs_with_a_nan_on_either_side_are_dropped(name):
    metric = METRICS[name]
    clean = metric([1.0, 2.0, 3.0, 4.0], [1.5, 2.0, 3.5, 5.0])
    assert metric([1.0, NAN, 2.0, 3.0, 9.0, 4.0], [1.5, 7.0, 2.0, 3.5, NAN, 5.0]) == clean


@pytest.mark.parametrize("name", NUMERIC)
def test_shape_mismatch_is_a_value_error_naming_the_lengths(name):
    with pytest.raises(ValueError, match="lengths 3 and 4"):
        METRICS[name]([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="1-D"):
        METRICS[name]([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("name", NUMERIC)
def test_infinite_values_are_a_value_error_not_undefined(name):
    with pytest.raises(ValueError, match="infinite") as raised:
        METRICS[name]([1.0, 2.0, 3.0], [1.0, math.inf, 3.0])
    assert not isinstance(raised.value, MetricUndefined)


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize(("obs", "sim"), [([1.0, NAN, 3.0], [1.0, 2.0, NAN]), ([NAN, NAN], [1.0, 2.0]), ([], [])])
def test_fewer_than_two_valid_pairs_is_undefined(name, obs, sim):
    with pytest.raises(MetricUndefined, match="at least 2"):
        METRICS[name](obs, sim)


@pytest.mark.parametrize("metric", [nse, kge, r2])
@pytest.mark.parametrize("constant", [[2.0, 2.0, 2.0], [0.1, 0.1, 0.1]])  # mean([0.1]*3) != 0.1
def test_constant_obs_is_undefined_where_the_formula_divides_by_its_spread(metric, constant):
    with pytest.raises(MetricUndefined, match="obs is constant"):
        metric(constant, [1.0, 2.0, 3.0])


def test_kge_with_zero_mean_obs_is_undefined():
    with pytest.raises(MetricUndefined, match=r"mean\(obs\) is 0"):
        kge([-1.0, 1.0], [1.0, 2.0])


def test_metric_undefined_is_a_value_error():
    assert issubclass(MetricUndefined, ValueError)


# --- silhouette -----------------------------------------------------------------------------------


def test_silhouette_by_hand():
    # Points 0, 1 | 4, 5. For 0: a = 1, b = (4 + 5)/2 = 4.5, s = 3.5/4.5 = 7/9; for 1: a = 1,
    # b = (3 + 4)/2 = 3.5, s = 2.5/3.5 = 5/7; 4 and 5 mirror them. Mean = (7/9 + 5/7)/2 = 47/63.
    assert silhouette([[0.0], [1.0], [4.0], [5.0]], [0, 0, 1, 1]) == pytest.approx(47 / 63, abs=1e-15)


def test_silhouette_gives_a_singleton_zero():
    # Points 0, 1 | 5. For 0: a = 1, b = 5, s = 4/5; for 1: a = 1, b = 4, s = 3/4; 5 alone: s = 0.
    assert silhouette([[0.0], [1.0], [5.0]], ["x", "x", "y"]) == pytest.approx((0.8 + 0.75 + 0) / 3, abs=1e-15)


def test_silhouette_uses_euclidean_distance():
    # Points (0,0), (3,4) | (6,8), (9,12), neighbours 5 apart: a = 5 for all; for (0,0):
    # b = (10 + 15)/2 = 12.5, s = 7.5/12.5 = 0.6; for (3,4): b = (5 + 10)/2 = 7.5, s = 2.5/7.5 = 1/3.
    points = [[0.0, 0.0], [3.0, 4.0], [6.0, 8.0], [9.0, 12.0]]
    assert silhouette(points, [0, 0, 1, 1]) == pytest.approx((0.6 + 1 / 3) / 2, abs=1e-15)


def random_clustering(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n, d, k = rng.integers(8, 60), rng.integers(1, 5), rng.integers(2, 6)
    labels = rng.integers(0, k, n)
    labels[0] = k  # a singleton cluster
    return rng.normal(size=(n, d)) + labels[:, None], labels


@pytest.mark.parametrize("seed", range(6))
def test_silhouette_equals_scikit_learn(seed):
    features, labels = random_clustering(seed)
    assert silhouette(features, labels) == pytest.approx(silhouette_score(features, labels), rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_silhouette_ignores_label_names_and_row_order(seed):
    features, labels = random_clustering(seed)
    renamed = np.array([f"cluster-{(7 - label) % 6}" for label in labels])
    assert silhouette(features, renamed) == silhouette(features, labels)
    order = np.random.default_rng(seed).permutation(len(labels))
    assert silhouette(features[order], labels[order]) == pytest.approx(silhouette(features, labels), rel=1e-12)


@pytest.mark.parametrize("labels", [[0, 0, 0, 0], [0, 1, 2, 3], []])
def test_silhouette_needs_two_to_n_minus_one_clusters(labels):
    features = np.arange(len(labels), dtype=float).reshape(-1, 1)
    with pytest.raises(MetricUndefined, match="silhouette needs 2 to n - 1"):
        silhouette(features, labels)


def test_silhouette_refuses_nan_features_and_missing_labels_instead_of_dropping_rows():
    with pytest.raises(ValueError, match="features hold NaN") as raised:
        silhouette([[0.0], [1.0], [NAN], [5.0]], [0, 0, 1, 1])
    assert not isinstance(raised.value, MetricUndefined)
    with pytest.raises(ValueError, match="1 row"):
        silhouette([[0.0], [1.0], [4.0], [5.0]], ["a", "a", None, "b"])
    with pytest.raises(ValueError, match="one row per label"):
        silhouette([[0.0], [1.0], [4.0]], [0, 0, 1, 1])


# --- adjusted Rand --------------------------------------------------------------------------------


def test_adjusted_rand_by_hand():
    # n = 4, C(4,2) = 6 pairs; every contingency cell is 1 -> index 0; A = B = 1 + 1 = 2;
    # expected = 2·2/6 = 2/3; max = 2 -> (0 - 2/3)/(2 - 2/3) = -0.5
    assert adjusted_rand([0, 0, 1, 1], [0, 1, 0, 1]) == -0.5
    # Cells 2,1 | 1,2 -> index = 1 + 0 + 0 + 1 = 2; A = 3 + 3 = 6; B = 1 + 1 + 1 = 3; C(6,2) = 15;
    # expected = 18/15 = 1.2; max = 4.5 -> 0.8/3.3 = 8/33
    assert adjusted_rand([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]) == 8 / 33
    # One cluster against singletons: index 0 = expected 0 -> 0
    assert adjusted_rand([0, 0, 0, 0], [0, 1, 2, 3]) == 0.0
    assert adjusted_rand(["a", "a", "b"], [5, 5, 9]) == 1.0


@pytest.mark.parametrize("seed", range(6))
def test_adjusted_rand_equals_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, rng.integers(2, 6), rng.integers(5, 80))
    noisy = np.where(rng.random(len(truth)) < 0.3, rng.integers(0, 4, len(truth)), truth)
    assert adjusted_rand(truth, noisy) == pytest.approx(adjusted_rand_score(truth, noisy), rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_adjusted_rand_ignores_label_names_and_is_symmetric(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 3, 30), rng.integers(0, 4, 30)
    value = adjusted_rand(a, b)
    assert adjusted_rand(np.array(["z", "x", "y"])[a], (b + 2) % 4) == value
    assert adjusted_rand(b, a) == value


def test_adjusted_rand_drops_pairs_with_a_missing_label():
    assert adjusted_rand([0.0, 0.0, 1.0, 1.0, NAN], [0, 0, 1, 1, 0]) == 1.0
    assert adjusted_rand(["a", "a", "b", "b", "a"], ["p", "p", "q", "q", None]) == 1.0


@pytest.mark.parametrize(
    ("labels_a", "labels_b"),
    [([1, 1, 1], [2, 2, 2]), ([0, 1, 2], [5, 6, 7]), ([0, None, 1], [None, 1, 1])],
    ids=["both-one-cluster", "both-singletons", "one-pair"],
)
def test_adjusted_rand_undefined(labels_a, labels_b):
    with pytest.raises(MetricUndefined):
        adjusted_rand(labels_a, labels_b)


def test_adjusted_rand_length_mismatch():
    with pytest.raises(ValueError, match="lengths 3 and 2"):
        adjusted_rand([0, 0, 1], [0, 1])


# --- registries -----------------------------------------------------------------------------------


def test_registries_agree():
    assert set(METRICS) == {"nse", "kge", "rmse", "mae", "bias", "r2", "adjusted_rand",
                            "variability_error", "bias_ratio_error", "relative_bias"}
    assert set(DIRECTION) == set(METRICS) | {"silhouette"}
    assert LOWER_IS_BETTER == {"rmse", "mae", "variability_error", "bias_ratio_error", "relative_bias"}
    assert DIRECTION["bias"] == "zero"
    assert all(metric.__name__ == name for name, metric in METRICS.items())
