import json

import pytest

from stages.catalog import AnswerSpec, HypothesisSpec, MetricSpec
from stages.scoring.outcomes import Execution, Outcome
from stages.scoring.query import GoldError, QueryScore, score_query

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
