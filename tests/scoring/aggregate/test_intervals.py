import numpy as np
import pytest

from stages.scoring.aggregate.intervals import interval, mean_interval, paired_delta, task_resamples


def test_a_task_of_equal_values_has_a_point_interval():
    resampled = task_resamples({"t": np.array([1.0, 1.0, 1.0])}, resamples=200, seed=0)
    assert resampled["t"].shape == (200,)
    ci = mean_interval(resampled, ["t"], level=0.95, resamples=200)
    assert (ci.low, ci.high, ci.level, ci.resamples) == (100.0, 100.0, 0.95, 200)


def test_the_mean_over_tasks_of_constant_tasks_is_exact():
    resampled = task_resamples({"a": np.array([1.0, 1.0]), "b": np.zeros(3)}, resamples=100, seed=3)
    ci = mean_interval(resampled, ["a", "b"], level=0.9, resamples=100)
    assert (ci.low, ci.high) == (50.0, 50.0)


def test_resampled_means_take_only_values_a_resample_can_give():
    resampled = task_resamples({"t": np.array([0.0, 1.0])}, resamples=1000, seed=1)
    assert set(np.unique(resampled["t"])) == {0.0, 50.0, 100.0}
    ci = mean_interval(resampled, ["t"], level=0.95, resamples=1000)
    assert (ci.low, ci.high) == (0.0, 100.0)


def test_the_same_seed_gives_the_same_interval_and_another_seed_may_not():
    values = {"t": np.linspace(0, 1, 25), "u": np.linspace(1, 0, 7) ** 2}
    first = mean_interval(task_resamples(values, 500, 7), ["t", "u"], 0.95, 500)
    again = mean_interval(task_resamples(values, 500, 7), ["t", "u"], 0.95, 500)
    assert first == again
    assert first.low < 50.0 < first.high


def test_tasks_without_scored_queries_have_no_resamples_and_are_skipped():
    resampled = task_resamples({"empty": np.array([]), "t": np.array([0.5, 0.5])}, 50, 0)
    assert list(resampled) == ["t"]
    ci = mean_interval(resampled, ["empty", "t"], 0.95, 50)
    assert (ci.low, ci.high) == (50.0, 50.0)
    assert mean_interval(resampled, ["empty"], 0.95, 50) is None
    assert interval(np.array([]), 0.95, 50) is None


def test_a_paired_difference_of_a_constant_shift_has_no_spread():
    baseline = {"t": {"q1": 0.0, "q2": 0.5, "q3": 0.25}}
    system = {"t": {query: value + 0.5 for query, value in baseline["t"].items()}}
    ci = paired_delta(system, baseline, resamples=300, seed=0, level=0.95)
    assert (ci.low, ci.high) == pytest.approx((50.0, 50.0))


def test_a_paired_difference_uses_only_queries_both_were_scored_on():
    system = {"t": {"q1": 1.0, "q2": 1.0, "q4": 1.0}, "only_system": {"x": 1.0}}
    baseline = {"t": {"q1": 0.0, "q2": 0.0, "q3": 1.0}}
    ci = paired_delta(system, baseline, resamples=100, seed=0, level=0.95)
    assert (ci.low, ci.high) == (100.0, 100.0)
    assert paired_delta({"t": {"a": 1.0}}, {"t": {"b": 1.0}}, 100, 0, 0.95) is None


def test_the_interval_is_reported_in_json_form_rounded():
    ci = interval(np.array([1 / 3, 2 / 3]), 0.5, 2)
    assert ci.as_dict() == {"low": 0.416667, "high": 0.583333, "level": 0.5, "resamples": 2}


def test_a_task_with_a_single_query_makes_the_interval_undefined_not_a_point():
    # One query per task has no spread to resample: [x, x] would claim certainty.
    resampled = task_resamples({"one": np.array([1.0]), "many": np.array([0.0, 1.0, 1.0])}, 100, 0)
    assert resampled["one"] is None and resampled["many"].shape == (100,)
    assert mean_interval(resampled, ["one", "many"], 0.95, 100) is None
    assert mean_interval(resampled, ["many"], 0.95, 100) is not None
    assert paired_delta({"t": {"q1": 1.0, "q2": 0.0}}, {"t": {"q1": 0.0, "q3": 1.0}}, 100, 0, 0.95) is None
