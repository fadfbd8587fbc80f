import pytest

from stages.catalog import HypothesisSpec, MetricSpec
from stages.scoring.query.checks import (
    hypothesis_matches,
    lower_is_better,
    metric_reward,
    target_satisfied,
)


def metric(target: str, valid_range=(None, None)) -> MetricSpec:
    return MetricSpec(name="m", description="d", target=target, valid_range=valid_range)


def hypothesis(fmt: str = "number", **fields) -> HypothesisSpec:
    return HypothesisSpec(format=fmt, description="d", **fields)


# --- metric targets -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "value", "expected"),
    [
        ("> 0.3", 0.31, True),
        ("> 0.3", 0.3, False),
        (">= 0.3", 0.3, True),
        (">= 0.3", 0.2999, False),
        ("< 2", 1.99, True),
        ("< 2", 2.0, False),
        ("<= 2", 2.0, True),
        ("<= 2", 2.01, False),
        ("== 5", 5.0, True),
        ("== 5", 5.000000001, True),  # within rel 1e-9
        ("== 5", 5.0001, False),
        (">= -1e-3", -0.001, True),
        ("> 0.3", float("nan"), False),
        ("> 0.3", float("inf"), False),
    ],
)
def test_inequality_targets(target, value, expected):
    assert target_satisfied(metric(target), value) is expected


@pytest.mark.parametrize(
    ("target", "valid_range", "value", "expected"),
    [
        ("lower is better", (0, None), 0.0, True),  # bounds inclusive
        ("lower is better", (0, None), 123.4, True),
        ("lower is better", (0, None), -0.5, False),  # negative RMSE is impossible
        ("higher is better", (-1, 1), -1.0, True),
        ("higher is better", (-1, 1), 1.0, True),
        ("higher is better", (-1, 1), 1.2, False),
        ("higher is better", (None, None), -1e9, True),
        ("higher is better", (None, None), float("nan"), False),
    ],
)
def test_directional_targets_accept_any_finite_value_in_range(target, valid_range, value, expected):
    assert target_satisfied(metric(target, valid_range), value) is expected


def test_value_outside_valid_range_fails_an_inequality_target_it_would_meet():
    assert target_satisfied(metric("> 0.3", valid_range=(None, 1)), 1.5) is False


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("lower is better", True),
        ("< 2", True),
        ("<= 2", True),
        ("higher is better", False),
        ("> 0.3", False),
        (">= 0.3", False),
        ("== 5", False),
    ],
)
def test_lower_is_better(target, expected):
    assert lower_is_better(metric(target)) is expected


# --- training reward, worked by hand --------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "valid_range", "value", "reference", "expected"),
    [
        # target met, 0.5 of 0.8: 0.10 + 0.40 + 0.50 * 0.625
        ("> 0.3", (None, 1), 0.5, 0.8, 0.8125),
        # target missed, 0.2 of 0.8: 0.10 + 0 + 0.50 * 0.25
        ("> 0.3", (None, 1), 0.2, 0.8, 0.225),
        # beating the reference is clipped at 1
        ("> 0.3", (None, 1), 0.9, 0.8, 1.0),
        # lower is better, flipped: 0.10 + 0.40 + 0.50 * (1.2 / 1.6)
        ("< 2", (0, None), 1.6, 1.2, 0.875),
        ("lower is better", (0, None), 1.0, 1.2, 1.0),
        # a zero against a non-zero reference scores 0 even though `>= 0` is met
        (">= 0", (None, None), 0.0, 0.8, 0.0),
        ("lower is better", (0, None), 0.0, 1.2, 0.0),
        # no reference: 0.40 sanity + 0.60 target
        ("> 0.3", (None, 1), 0.5, None, 1.0),
        ("> 0.3", (None, 1), 0.2, None, 0.4),
        # a zero reference of a higher-is-better metric counts as no reference
        ("> 0.3", (None, 1), 0.2, 0.0, 0.4),
        # outside the valid range: no sanity, no target, no reference term
        ("higher is better", (None, 1), 3.0, 0.5, 0.0),
        ("> 0.3", (None, 1), 3.0, None, 0.0),
        # negative reference (mirrored): -0.5 reaches 0.4 of -0.2 -> 0.10 + 0 + 0.50 * 0.4
        ("> 0", (None, 1), -0.5, -0.2, 0.3),
        # beating a negative reference earns the full reference term
        ("> 0", (None, 1), -0.1, -0.2, 0.6),
        ("> 0", (None, 1), 0.1, -0.2, 1.0),
        # lower-is-better with a perfect (zero) reference
        ("lower is better", (0, None), 0.0, 0.0, 1.0),
        ("lower is better", (0, None), 0.5, 0.0, 0.5),
        # lower-is-better with a negative reference (mirrored): beating -0.5 earns the full term,
        # -0.4 falls short at 0.4/0.5 -> 0.10 + 0.40 + 0.50 * 0.8, a positive value earns none
        ("< 0", (None, None), -0.6, -0.5, 1.0),
        ("< 0", (None, None), -0.4, -0.5, 0.9),
        ("< 0", (None, None), 0.5, -0.5, 0.1),
    ],
)
def test_metric_reward(target, valid_range, value, reference, expected):
    reward = metric_reward(metric(target, valid_range), value, reference)
    assert reward == pytest.approx(expected, abs=1e-12)


def test_target_that_escaped_validation_is_refused_by_name():
    unchecked = MetricSpec.model_construct(name="m", description="d", target="about 5", valid_range=(None, None))
    with pytest.raises(ValueError, match=r"^unreadable target 'about 5'$"):
        target_satisfied(unchecked, 5.0)


def test_metric_reward_refuses_a_non_finite_reference():
    with pytest.raises(ValueError, match="non-finite reference"):
        metric_reward(metric("> 0.3"), 0.5, float("nan"))


# --- hypothesis matching --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "answer", "gold", "expected"),
    [
        # default 10% relative tolerance around 10: tol = 1.0, edges inclusive
        ({}, 11.0, 10.0, True),
        ({}, 9.0, 10.0, True),
        ({}, 11.000001, 10.0, False),
        ({}, 8.999999, 10.0, False),
        # float representation at the edge: 0.33 - 0.3 > 0.1 * 0.3 in binary, still passes
        ({}, 0.33, 0.3, True),
        ({}, 0.27, 0.3, True),
        ({}, 0.3301, 0.3, False),
        # negative gold uses |gold|
        ({}, -1.1, -1.0, True),
        # abs_tol wins when larger: tol = max(0.5, 0.01 * 10)
        ({"abs_tol": 0.5, "rel_tol": 0.01}, 10.5, 10.0, True),
        ({"abs_tol": 0.5, "rel_tol": 0.01}, 10.51, 10.0, False),
        # gold 0 with only a relative tolerance: exact
        ({}, 0.0, 0.0, True),
        ({}, 1e-6, 0.0, False),
        # comparators, tol = 1.0 around 10
        ({"comparator": ">="}, 9.0, 10.0, True),
        ({"comparator": ">="}, 8.99, 10.0, False),
        ({"comparator": ">="}, 100.0, 10.0, True),
        ({"comparator": ">"}, 9.0, 10.0, False),
        ({"comparator": ">"}, 9.01, 10.0, True),
        ({"comparator": "<="}, 11.0, 10.0, True),
        ({"comparator": "<="}, 11.01, 10.0, False),
        ({"comparator": "<"}, 11.0, 10.0, False),
        ({"comparator": "<"}, 10.99, 10.0, True),
        ({"comparator": "<"}, -50.0, 10.0, True),
        # far on the wrong side of a strict comparator
        ({"comparator": ">"}, 5.0, 10.0, False),
        ({"comparator": "<"}, 20.0, 10.0, False),
        # float error around a gold of 0 is absorbed (within 1e-12): 0.1 + 0.2 - 0.3 = 5.6e-17
        ({}, 0.1 + 0.2 - 0.3, 0.0, True),
        # valid range beats tolerance: a correlation of 1.05 is impossible
        ({"valid_range": (-1, 1)}, 1.05, 1.0, False),
        ({"valid_range": (-1, 1)}, 0.95, 1.0, True),
    ],
)
def test_number_matches(fields, answer, gold, expected):
    assert hypothesis_matches(hypothesis("number", **fields), answer, gold) is expected


@pytest.mark.parametrize(
    ("fmt", "answer", "gold", "expected"),
    [
        ("boolean", True, True, True),
        ("boolean", False, False, True),
        ("boolean", False, True, False),
        ("boolean", 1, True, False),
        ("category", " Positive ", "positive", True),
        ("category", "positive correlation", "positive", False),  # no substring leniency
        ("category", "positive", "positive correlation", False),
        ("list", [1.05, " A "], [1.0, "a"], True),
        ("list", [1.2, "a"], [1.0, "a"], False),
        ("list", [1.0], [1.0, 2.0], False),
        ("list", [2.0, 1.0], [1.0, 2.0], False),  # order matters
        ("list", ["1.0"], [1.0], False),
        # coordinates: abs_tol 0 means 0.01 degrees
        ("coordinates", [40.01, -105.0], [40.0, -105.0], True),
        ("coordinates", [40.0, -105.0101], [40.0, -105.0], False),
        ("coordinates", [40.0101, -105.0], [40.0, -105.0], False),
        ("coordinates", [0.0, 179.996], [0.0, -179.996], True),  # across the antimeridian
        ("coordinates", [-105.0, 40.0], [40.0, -105.0], False),
        # a list item is compared by the gold item's type: a number is never a category
        ("list", [1.0], ["a"], False),
        ("list", "a", ["a"], False),  # a string is not a one-item list
        # coordinates are a list of exactly two finite numbers
        ("coordinates", 40.0, [40.0, -105.0], False),
        ("coordinates", [40.0, -105.0, 0.0], [40.0, -105.0], False),
        ("coordinates", [40.0, "east"], [40.0, -105.0], False),
        # longitudes wrap every 360 degrees: 361 is 1 degree from 0, 720.005 is 0.005
        ("coordinates", [0.0, 361.0], [0.0, 0.0], False),
        ("coordinates", [0.0, 720.005], [0.0, 0.0], True),
    ],
)
def test_typed_matches(fmt, answer, gold, expected):
    assert hypothesis_matches(hypothesis(fmt), answer, gold) is expected


def test_coordinates_use_abs_tol_in_degrees_when_given():
    spec = hypothesis("coordinates", abs_tol=0.5)
    assert hypothesis_matches(spec, [40.5, -105.5], [40.0, -105.0]) is True
    assert hypothesis_matches(spec, [40.6, -105.0], [40.0, -105.0]) is False
