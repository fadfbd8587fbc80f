import json

import pytest

from stages.catalog import AnswerSpec, HypothesisSpec, MetricSpec
from stages.scoring.query.outcomes import Execution, Outcome
from stages.scoring.query.scorer import NO_GRADING, GoldError, Grading, QueryScore, beats_references, score_query

METRICS = AnswerSpec(
    metrics=[
        MetricSpec(name="nse", description="NSE", target="> 0.3", valid_range=(None, 1)),
        MetricSpec(
            name="rmse", description="RMSE", target="lower is better", valid_range=(0, None)
        ),
    ]
)
GOLD = {"metrics": {"nse": 0.8, "rmse": 1.2}}
NUMBER = AnswerSpec(hypothesis=HypothesisSpec(format="number", description="slope"))


def answered(answer: dict, exit_code: int | None = 0) -> Execution:
    return Execution(exit_code, False, None, json.dumps(answer))


def test_all_metrics_pass_and_reward_is_the_mean_of_hand_worked_rewards():
    # nse: 0.10 + 0.40 + 0.50 * 0.5/0.8 = 0.8125; rmse: 0.10 + 0.40 + 0.50 * 1.2/1.6 = 0.875
    score = score_query(METRICS, answered({"metrics": {"nse": 0.5, "rmse": 1.6}}), GOLD)
    assert score == QueryScore(
        Outcome.ANSWERED, True, {"nse": True, "rmse": True}, 1.0, pytest.approx(0.84375)
    )


def test_failed_target_halves_the_pass_rate():
    # nse: 0.10 + 0 + 0.50 * 0.2/0.8 = 0.225; rmse: 0.875
    score = score_query(METRICS, answered({"metrics": {"nse": 0.2, "rmse": 1.6}}), GOLD)
    assert score.metric_passes == {"nse": False, "rmse": True}
    assert score.pass_rate == 0.5
    assert score.reward == pytest.approx(0.55)


def test_omitted_metric_fails_and_earns_no_reward():
    score = score_query(METRICS, answered({"metrics": {"nse": 0.5}}), GOLD)
    assert score.metric_passes == {"nse": True, "rmse": False}
    assert score.pass_rate == 0.5
    assert score.reward == pytest.approx(0.8125 / 2)


def test_missing_reference_uses_the_no_reference_weights():
    # rmse has no reference: 0.40 + 0.60 = 1.0
    gold = {"metrics": {"nse": 0.8, "rmse": None}}
    score = score_query(METRICS, answered({"metrics": {"nse": 0.5, "rmse": 1.6}}), gold)
    assert score.reward == pytest.approx((0.8125 + 1.0) / 2)


def test_valid_answer_after_a_crash_is_scored_with_exec_ok_false():
    execution = answered({"metrics": {"nse": 0.5, "rmse": 1.6}}, exit_code=1)
    score = score_query(METRICS, execution, GOLD)
    assert (score.outcome, score.exec_ok, score.pass_rate) == (Outcome.ANSWERED, False, 1.0)


@pytest.mark.parametrize(
    ("execution", "outcome"),
    [
        (answered({"metrics": {"nse": 0.0, "rmse": 0.0}}), Outcome.UNREALISTIC),
        (answered({"metrics": {"nse": -1, "rmse": -1}}), Outcome.UNREALISTIC),
        (Execution(0, False, None, "{"), Outcome.UNPARSEABLE),
        (Execution(0, False, None, None), Outcome.NO_OUTPUT),
        (Execution(2, False, None, None), Outcome.EXEC_ERROR),
        (Execution(None, True, None, None), Outcome.TIMEOUT),
        (Execution(None, False, "sandbox died", None), Outcome.INFRA_ERROR),
    ],
)
def test_queries_that_are_not_answered_score_zero(execution, outcome):
    score = score_query(METRICS, execution, GOLD)
    assert score == QueryScore(outcome, execution.exit_code == 0, {}, 0.0, 0.0)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (10.9, QueryScore(Outcome.ANSWERED, True, {"answer": True}, 1.0, 1.0)),
        (12.0, QueryScore(Outcome.ANSWERED, True, {"answer": False}, 0.0, 0.0)),
        (-1, QueryScore(Outcome.UNREALISTIC, True, {}, 0.0, 0.0)),
    ],
)
def test_hypothesis_query_scores_one_or_zero(answer, expected):
    assert score_query(NUMBER, answered({"answer": answer}), {"answer": 10.0}) == expected


@pytest.mark.parametrize(
    ("spec", "gold"),
    [
        (METRICS, {"answer": 0.8}),
        (METRICS, {"metrics": {"nse": "high"}}),
        (METRICS, {"metrics": {"nse": float("nan")}}),
        (NUMBER, {"answer": "ten"}),
        (NUMBER, {"metrics": {"nse": 0.8}}),
    ],
)
def test_malformed_gold_raises_instead_of_scoring_the_agent(spec, gold):
    with pytest.raises(GoldError):
        score_query(spec, Execution(None, True, None, None), gold)


@pytest.mark.parametrize(
    ("spec", "gold", "message"),
    [
        (METRICS, [0.8, 1.2], "gold needs a `metrics` object, got [0.8, 1.2]"),
        (METRICS, {"metrics": [0.8, 1.2]}, "gold needs a `metrics` object, got {'metrics': [0.8, 1.2]}"),
        (METRICS, {"metrics": {"nse": 0.8, "rmse": "low"}}, "gold metric rmse: 'low' is not a finite number"),
        (NUMBER, {"answer": "ten"}, "gold {'answer': 'ten'} does not fit the number format"),
    ],
)
def test_malformed_gold_is_named_in_the_error(spec, gold, message):
    with pytest.raises(GoldError) as raised:
        score_query(spec, answered({"answer": 10.0}), gold)
    assert str(raised.value) == message


# --- reference models and bootstrap tolerances (the query's Grading) ------------------------------


def graded(name: str, target: str, references: list[str], margin: float = 0.0,
           margin_kind: str = "absolute") -> MetricSpec:
    return MetricSpec(name=name, description=name, target=target,
                      grade={"function": "nse", "column": "q"}, references=references, margin=margin,
                      margin_kind=margin_kind)


NSE_VS_CLIM = graded("nse", "higher is better", ["climatology"], margin=0.25)
RMSE_VS_CLIM = graded("rmse", "lower is better", ["climatology"], margin=0.25)


@pytest.mark.parametrize(
    ("metric", "reference", "value", "beats"),
    [
        (NSE_VS_CLIM, 0.5, 0.75, False),  # exactly reference + margin: not more than the margin
        (NSE_VS_CLIM, 0.5, 0.75 + 1e-9, True),
        (NSE_VS_CLIM, 0.5, 0.5, False),
        (graded("nse", "higher is better", ["climatology"]), 0.5, 0.5, False),  # equal, margin 0
        (graded("nse", "higher is better", ["climatology"]), 0.5, 0.5 + 1e-12, True),
        (RMSE_VS_CLIM, 1.0, 0.75, False),
        (RMSE_VS_CLIM, 1.0, 0.75 - 1e-9, True),
        (RMSE_VS_CLIM, 1.0, 1.5, False),
        (graded("rmse", "< 5", ["climatology"]), 1.0, 1.0, False),  # `<` targets are lower-is-better
        (graded("rmse", "< 5", ["climatology"]), 1.0, 0.999, True),
    ],
)
def test_a_metric_must_beat_its_reference_by_more_than_the_margin(metric, reference, value, beats):
    assert beats_references(metric, value, Grading({"climatology": {metric.name: reference}})) is beats


@pytest.mark.parametrize(
    ("metric", "reference", "value", "beats"),
    [
        # higher is better, margin 0.5 x |-2.0| = 1.0: must exceed -1.0
        (graded("nse", "higher is better", ["climatology"], 0.5, "relative"), -2.0, -1.0, False),
        (graded("nse", "higher is better", ["climatology"], 0.5, "relative"), -2.0, -0.999, True),
        # lower is better, margin 0.25 x 2.0 = 0.5: must be below 1.5
        (graded("rmse", "lower is better", ["climatology"], 0.25, "relative"), 2.0, 1.5, False),
        (graded("rmse", "lower is better", ["climatology"], 0.25, "relative"), 2.0, 1.499, True),
        # a relative margin of a reference at 0 is 0: strictly better is enough
        (graded("rmse", "lower is better", ["climatology"], 0.25, "relative"), 0.0, 0.0, False),
    ],
)
def test_a_relative_margin_scales_with_the_references_magnitude(metric, reference, value, beats):
    assert beats_references(metric, value, Grading({"climatology": {metric.name: reference}})) is beats


def test_every_defined_reference_must_be_beaten_and_undefined_ones_are_skipped():
    metric = graded("nse", "higher is better", ["climatology", "linear_forcing", "interpolate"], margin=0.25)
    grading = Grading({"climatology": {"nse": 0.5}, "linear_forcing": {"nse": None}})  # interpolate absent
    assert beats_references(metric, 0.76, grading) is True
    grading = Grading({"climatology": {"nse": 0.5}, "linear_forcing": {"nse": 0.6}})
    assert beats_references(metric, 0.76, grading) is False
    assert beats_references(metric, 0.86, grading) is True


@pytest.mark.parametrize(
    ("value", "beats"),
    [
        (0.76, False),  # beats climatology by its margin, but not the unnamed least squares (0.8)
        (0.8, False),  # equal to an unnamed reference does not pass either
        (0.8 + 1e-9, True),  # an unnamed reference needs no margin
    ],
)
def test_every_other_graded_reference_must_be_beaten_too(value, beats):
    grading = Grading({"climatology": {"nse": 0.5}, "linear_forcing": {"nse": 0.8},
                       "persistence": {"nse": None}})  # undefined: skipped
    assert beats_references(NSE_VS_CLIM, value, grading) is beats


def test_a_metric_that_grades_a_standard_model_compares_only_its_named_references():
    metric = graded("nse", "higher is better", ["climatology"], margin=0.25).model_copy(
        update={"beat_other_models": False})
    grading = Grading({"climatology": {"nse": 0.5}, "linear_forcing": {"nse": 0.8}})
    assert beats_references(metric, 0.8, grading) is True


def test_a_metric_without_references_ignores_the_graded_models():
    metric = graded("nse", "higher is better", [])
    assert beats_references(metric, 0.1, Grading({"linear_forcing": {"nse": 0.8}})) is True


def test_no_defined_reference_is_the_benchmarks_fault():
    metric = graded("nse", "higher is better", ["climatology", "linear_forcing"])
    grading = Grading({"climatology": {"nse": None}, "linear_forcing": {"kge": 0.3}})
    with pytest.raises(GoldError) as raised:
        beats_references(metric, 0.9, grading)
    assert str(raised.value) == ("metric nse: none of its reference models ['climatology', 'linear_forcing'] "
                                 "has a value on this query")


def test_a_metric_without_references_needs_no_grading():
    assert beats_references(METRICS.metrics[0], 0.31, NO_GRADING) is True


def test_score_query_fails_a_metric_that_meets_its_target_but_not_its_reference():
    spec = AnswerSpec(metrics=[graded("nse", "> 0.3", ["climatology"], margin=0.05),
                               graded("kge", "> 0.3", ["climatology"], margin=0.05)])
    grading = Grading({"climatology": {"nse": 0.6, "kge": 0.2}})
    score = score_query(spec, answered({"metrics": {"nse": 0.62, "kge": 0.4}}), {"metrics": {}}, grading)
    assert score.metric_passes == {"nse": False, "kge": True}
    assert score.pass_rate == 0.5
    with pytest.raises(GoldError, match="metric nse: none of its reference models"):
        score_query(spec, answered({"metrics": {"nse": 0.62, "kge": 0.4}}), {"metrics": {}})  # no Grading


@pytest.mark.parametrize(
    ("answer", "tolerance", "passed"),
    [
        (10.9, None, True),  # the spec's rel_tol 0.1: |10.9 - 10| <= 1.0
        (10.9, 0.5, False),  # the bootstrap tolerance replaces it: 0.9 > 0.5
        (10.5, 0.5, True),
        (12.0, None, False),
        (12.0, 2.5, True),  # and is not capped by the spec's tolerance either
        (10.0, 0.0, True),
    ],
)
def test_a_bootstrap_tolerance_replaces_rel_tol_and_abs_tol(answer, tolerance, passed):
    score = score_query(NUMBER, answered({"answer": answer}), {"answer": 10.0}, Grading(tolerance=tolerance))
    assert score.metric_passes == {"answer": passed}
