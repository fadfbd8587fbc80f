import json

import pytest

from stages.catalog import AnswerSpec, HypothesisSpec, MetricSpec
from stages.scoring.query.outcomes import (
    Execution,
    Outcome,
    classify,
    is_realistic,
    parse_answer,
)

METRICS = AnswerSpec(
    metrics=[
        MetricSpec(name="nse", description="NSE", target="> 0.3", valid_range=(None, 1)),
        MetricSpec(
            name="rmse", description="RMSE", target="lower is better", valid_range=(0, None)
        ),
    ]
)


def hypothesis(fmt: str, **fields) -> AnswerSpec:
    return AnswerSpec(hypothesis=HypothesisSpec(format=fmt, description="d", **fields))


def run(text: str | None, exit_code: int | None = 0, timed_out=False, infra_error=None):
    return Execution(exit_code, timed_out, infra_error, text)


def outcome_of(spec: AnswerSpec, answer) -> Outcome:
    return classify(spec, run(json.dumps(answer)))[0]


VALID = json.dumps({"metrics": {"nse": 0.7, "rmse": 1.2}})


# --- the order of the outcome rules -------------------------------------------------------------


def test_infra_error_wins_over_everything():
    assert classify(METRICS, run(VALID, timed_out=True, infra_error="disk full")) == (
        Outcome.INFRA_ERROR,
        None,
    )


def test_timeout_wins_over_a_valid_answer_file():
    assert classify(METRICS, run(VALID, exit_code=None, timed_out=True)) == (Outcome.TIMEOUT, None)


def test_answer_file_the_harness_refused_is_unparseable_whatever_its_text():
    refused = Execution(0, False, None, VALID, answer_problem="answer.json is a symlink")
    assert classify(METRICS, refused) == (Outcome.UNPARSEABLE, None)


def test_timeout_wins_over_a_refused_answer_file():
    refused = Execution(None, True, None, None, answer_problem="answer.json is over the size cap")
    assert classify(METRICS, refused) == (Outcome.TIMEOUT, None)


def test_no_answer_file_with_nonzero_exit_is_exec_error():
    assert classify(METRICS, run(None, exit_code=1)) == (Outcome.EXEC_ERROR, None)


def test_no_answer_file_without_exit_code_is_exec_error():
    assert classify(METRICS, run(None, exit_code=None)) == (Outcome.EXEC_ERROR, None)


def test_no_answer_file_with_clean_exit_is_no_output():
    assert classify(METRICS, run(None, exit_code=0)) == (Outcome.NO_OUTPUT, None)


def test_valid_answer_counts_even_when_the_program_crashed_afterwards():
    execution = run(VALID, exit_code=1)
    assert classify(METRICS, execution) == (
        Outcome.ANSWERED,
        {"metrics": {"nse": 0.7, "rmse": 1.2}},
    )
    assert execution.exec_ok is False


def test_unrealistic_answer_is_returned_for_inspection():
    answer = {"metrics": {"nse": 0.0, "rmse": 0.0}}
    assert classify(METRICS, run(json.dumps(answer))) == (Outcome.UNREALISTIC, answer)


# --- metrics answers: parsing ---------------------------------------------------------------------


def test_extra_top_level_keys_and_extra_metric_names_are_dropped():
    text = json.dumps({"notes": "ok", "metrics": {"nse": 0.7, "kge": "n/a", "rmse": 2}})
    assert parse_answer(METRICS, text) == {"metrics": {"nse": 0.7, "rmse": 2.0}}


def test_omitted_metric_still_parses():
    assert parse_answer(METRICS, '{"metrics": {"nse": 0.7}}') == {"metrics": {"nse": 0.7}}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        '{"metrics": {"nse": 0.7}',  # truncated
        "[0.7, 1.2]",  # not an object
        '{"nse": 0.7, "rmse": 1.2}',  # no "metrics" key
        '{"metrics": [0.7, 1.2]}',
        '{"metrics": {"nse": "0.7"}}',  # number as a string
        '{"metrics": {"nse": null}}',
        '{"metrics": {"nse": true}}',
        '{"metrics": {"nse": NaN, "rmse": 1.0}}',  # non-finite -> unparseable (documented)
        '{"metrics": {"nse": 0.7, "rmse": Infinity}}',
        '{"metrics": {"nse": 0.7, "rmse": 1e999}}',  # overflows to inf
        "<answer.json is not UTF-8>",  # the harness's marker text
    ],
)
def test_unparseable_metrics_answers(text):
    assert parse_answer(METRICS, text) is None
    assert classify(METRICS, run(text))[0] is Outcome.UNPARSEABLE


# --- metrics answers: the realistic filter ------------------------------------------------------


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        ({"nse": 0.0, "rmse": 0.0}, Outcome.UNREALISTIC),  # defensive zeros
        ({"nse": -1, "rmse": -1}, Outcome.UNREALISTIC),  # defensive sentinels
        ({"nse": 0.7, "rmse": -1}, Outcome.UNREALISTIC),  # one sentinel spoils it
        ({"nse": -0.2, "rmse": 0.0}, Outcome.UNREALISTIC),  # nothing strictly positive
        ({}, Outcome.UNREALISTIC),
        ({"nse": 0.0, "rmse": 0.0, "padding": 5.0}, Outcome.UNREALISTIC),  # extras don't count
        ({"nse": -0.2, "rmse": 1.5}, Outcome.ANSWERED),
        ({"nse": 0.7}, Outcome.ANSWERED),
    ],
)
def test_realistic_filter_on_metrics(metrics, expected):
    assert outcome_of(METRICS, {"metrics": metrics}) is expected


def test_is_realistic_rejects_non_finite_values_handed_in_directly():
    assert is_realistic(METRICS, {"metrics": {"nse": float("nan"), "rmse": 1.0}}) is False


# --- hypothesis answers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "answer", "expected"),
    [
        (hypothesis("number"), -1, Outcome.UNREALISTIC),
        (hypothesis("number"), -1.0, Outcome.UNREALISTIC),
        (hypothesis("number"), 0, Outcome.ANSWERED),  # no positivity rule for hypotheses
        (hypothesis("number"), -0.4, Outcome.ANSWERED),
        (hypothesis("list"), [0.2, -1, 0.3], Outcome.UNREALISTIC),
        (hypothesis("list"), [], Outcome.UNREALISTIC),
        (hypothesis("list"), ["a", " "], Outcome.UNREALISTIC),
        (hypothesis("list"), ["a", 2], Outcome.ANSWERED),
        (hypothesis("coordinates"), [-1, -1], Outcome.UNREALISTIC),
        (hypothesis("coordinates"), [40.0, -1], Outcome.UNREALISTIC),
        (hypothesis("coordinates"), [40.0, -105.2], Outcome.ANSWERED),
        (hypothesis("category"), "", Outcome.UNREALISTIC),
        (hypothesis("category"), " -1 ", Outcome.UNREALISTIC),  # string sentinel
        (hypothesis("category"), "positive", Outcome.ANSWERED),
        (
            hypothesis("category", categories=["positive", "negative"]),
            " Negative",
            Outcome.ANSWERED,
        ),
        (hypothesis("boolean"), False, Outcome.ANSWERED),
    ],
)
def test_realistic_filter_on_hypotheses(spec, answer, expected):
    assert outcome_of(spec, {"answer": answer}) is expected


@pytest.mark.parametrize(
    ("spec", "answer"),
    [
        (hypothesis("number"), "0.5"),
        (hypothesis("number"), True),
        (hypothesis("number"), [0.5]),
        (hypothesis("number"), float("nan")),
        (hypothesis("boolean"), -1),  # the defensive agent's boolean sentinel
        (hypothesis("boolean"), "true"),
        (hypothesis("category"), 3),
        (hypothesis("category", categories=["positive", "negative"]), "none"),
        (hypothesis("category", categories=["positive", "negative"]), "-1"),
        (hypothesis("list"), [[1, 2]]),
        (hypothesis("list"), [1, None]),
        (hypothesis("list", categories=["a", "b"]), ["a", "c"]),
        (hypothesis("coordinates"), [40.0]),
        (hypothesis("coordinates"), [40.0, -105.0, 0.0]),
        (hypothesis("coordinates"), {"lat": 40.0, "lon": -105.0}),
    ],
)
def test_wrong_type_for_the_format_is_unparseable(spec, answer):
    assert outcome_of(spec, {"answer": answer}) is Outcome.UNPARSEABLE


def test_hypothesis_without_answer_key_is_unparseable():
    assert outcome_of(hypothesis("number"), {"value": 0.5}) is Outcome.UNPARSEABLE


def test_parsed_hypothesis_values_are_normalised():
    assert parse_answer(hypothesis("number"), '{"answer": 3}') == {"answer": 3.0}
    assert parse_answer(hypothesis("category"), '{"answer": "  up "}') == {"answer": "up"}
    assert parse_answer(hypothesis("list"), '{"answer": [1, " a "]}') == {"answer": [1.0, "a"]}
