"""recompute: the execution the scorer scores carries the harness's metrics, never the agent's."""

from __future__ import annotations

import json
from datetime import date

import pandas as pd
import pytest
from scibench_testing.graded import days, graded_task, metric, parquet

from stages.scoring.query.outcomes import Execution, Outcome
from stages.scoring.query.recompute import honesty, recompute
from stages.scoring.query.scorer import score_query

DATES = days(date(2000, 1, 8), 4)
TRUTH = pd.DataFrame({"gauge_id": ["a"] * 4 + ["b"] * 4, "date": DATES * 2,
                      "qobs_mm_d": [1.0, 2.0, 3.0, 4.0, 2.0, 4.0, 6.0, 8.0]})
REQUIRED = TRUTH[["gauge_id", "date"]]
ARTIFACT = parquet(REQUIRED.assign(qsim_mm_d=[1.0, 2.0, 3.0, 5.0, 3.0, 4.0, 6.0, 8.0]))
# By hand (see test_grade): per-basin NSE 0.8 and 0.95, median 0.875; pooled RMSE sqrt(2/8) = 0.5.
NSE, RMSE = 0.875, 0.5
TASK = graded_task([metric("nse", "nse", "qsim_mm_d", "median", "> 0.5", agree_within=0.05),
                    metric("rmse", "rmse", "qsim_mm_d", "pooled", "lower is better", agree_within=0.1)])


def run(reported: dict | None = None, artifact: bytes | None = ARTIFACT, problem: str | None = None,
        exit_code: int | None = 0, timed_out: bool = False, infra_error: str | None = None, task=TASK):
    answer = None if reported is None else json.dumps({"metrics": reported})
    execution = Execution(exit_code, timed_out, infra_error, answer)
    return recompute(task, execution, artifact, problem, TRUTH, REQUIRED, "gauge_id")


def test_the_scored_answer_holds_the_recomputed_metrics_not_the_reported_ones():
    result = run({"nse": 0.99, "rmse": 0.01})
    assert json.loads(result.execution.answer_text) == {"metrics": {"nse": pytest.approx(NSE), "rmse": RMSE}}
    assert result.execution.answer_problem is None
    assert result.reported == {"nse": 0.99, "rmse": 0.01}
    assert result.grades.values == {"nse": pytest.approx(NSE), "rmse": RMSE}
    assert result.artifact_problem is None
    assert result.honesty == "disagrees"
    score = score_query(TASK.answer, result.execution, {"metrics": {"nse": None, "rmse": None}})
    assert (score.outcome, score.metric_passes) == (Outcome.ANSWERED, {"nse": True, "rmse": True})


def test_the_scored_answer_is_recomputed_even_without_an_answer_json():
    result = run(None)
    assert json.loads(result.execution.answer_text) == {"metrics": {"nse": pytest.approx(NSE), "rmse": RMSE}}
    assert result.honesty == "unreported"
    assert result.reported == {"nse": None, "rmse": None}


# --- honesty --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reported", "verdict"),
    [
        ({"nse": NSE, "rmse": RMSE}, "agrees"),
        # Allowed: agree_within + 2 % of the recomputed value: nse 0.05 + 0.0175, rmse 0.1 + 0.01.
        ({"nse": NSE + 0.067, "rmse": RMSE - 0.109}, "agrees"),
        ({"nse": NSE - 0.068, "rmse": RMSE}, "disagrees"),
        ({"nse": NSE, "rmse": RMSE + 0.111}, "disagrees"),
        ({"nse": NSE}, "unreported"),
        ({"nse": NSE, "rmse": "0.5"}, "unreported"),  # text is not a reported number
        ({"nse": 0.5, "rmse": None}, "disagrees"),  # one disagreement outweighs a missing value
        ({"rmse": None, "nse": 0.5}, "disagrees"),
    ],
)
def test_honesty_compares_reported_and_recomputed_values_within_each_metrics_agree_within(reported, verdict):
    assert run(reported).honesty == verdict


def test_a_value_reported_for_a_metric_the_harness_finds_undefined_disagrees():
    assert honesty(TASK, {"nse": 0.5, "rmse": 0.5}, {"nse": None, "rmse": 0.5}) == "disagrees"


def test_an_answer_that_is_not_json_reports_nothing():
    execution = Execution(0, False, None, "{not json")
    result = recompute(TASK, execution, ARTIFACT, None, TRUTH, REQUIRED, "gauge_id")
    assert result.reported == {"nse": None, "rmse": None}
    assert result.honesty == "unreported"
    assert json.loads(result.execution.answer_text)["metrics"]["rmse"] == RMSE


# --- no artifact, a bad artifact ------------------------------------------------------------------


@pytest.mark.parametrize(("exit_code", "outcome"), [(0, Outcome.NO_OUTPUT), (1, Outcome.EXEC_ERROR)])
def test_a_missing_artifact_is_no_output_or_an_execution_error_whatever_answer_json_says(exit_code, outcome):
    result = run({"nse": NSE, "rmse": RMSE}, artifact=None, exit_code=exit_code)
    assert result.execution == Execution(exit_code, False, None, None, None)
    assert (result.grades, result.honesty) == (None, None)
    assert result.artifact_problem == "no work/predictions.parquet"
    assert score_query(TASK.answer, result.execution, {"metrics": {}}).outcome is outcome


def test_an_artifact_the_collector_refused_is_unparseable_with_its_reason():
    result = run({"nse": NSE}, artifact=None, problem="work/predictions.parquet is a symlink")
    assert result.execution.answer_text is None
    assert result.execution.answer_problem == "work/predictions.parquet is a symlink"
    assert result.artifact_problem == "work/predictions.parquet is a symlink"
    assert score_query(TASK.answer, result.execution, {"metrics": {}}).outcome is Outcome.UNPARSEABLE


@pytest.mark.parametrize(
    ("artifact", "reason"),
    [
        (b"garbage", "predictions.parquet is not a readable Parquet file: "),
        (parquet(REQUIRED.iloc[:7].assign(qsim_mm_d=1.0)), "predictions.parquet: 1 of 8 required rows are missing"),
    ],
)
def test_an_artifact_that_cannot_be_graded_is_unparseable_with_the_reason(artifact, reason):
    result = run({"nse": NSE, "rmse": RMSE}, artifact=artifact)
    assert result.execution.answer_text is None
    assert result.execution.answer_problem.startswith(reason)
    assert result.artifact_problem == result.execution.answer_problem
    assert (result.grades, result.honesty) == (None, None)
    assert result.reported == {"nse": NSE, "rmse": RMSE}
    assert score_query(TASK.answer, result.execution, {"metrics": {}}).outcome is Outcome.UNPARSEABLE


def test_an_undefined_metric_is_left_out_of_the_scored_answer_and_fails_its_check():
    # Constant truth per basin: NSE undefined everywhere; RMSE of sim vs 2.5: sqrt(mean of squares).
    truth = TRUTH.assign(qobs_mm_d=2.5)
    execution = Execution(0, False, None, json.dumps({"metrics": {"nse": 0.7, "rmse": 1.0}}))
    result = recompute(TASK, execution, ARTIFACT, None, truth, REQUIRED, "gauge_id")
    scored = json.loads(result.execution.answer_text)["metrics"]
    assert list(scored) == ["rmse"]
    assert result.grades.undefined == {"nse": "no entity has a defined nse"}
    assert result.honesty == "disagrees"
    score = score_query(TASK.answer, result.execution, {"metrics": {}})
    assert score.metric_passes == {"nse": False, "rmse": True}


# --- runs that did not finish ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("timed_out", "infra_error", "outcome"),
    [(True, None, Outcome.TIMEOUT), (False, "sandbox died", Outcome.INFRA_ERROR)],
)
def test_a_timeout_or_an_infrastructure_error_passes_through_ungraded(timed_out, infra_error, outcome):
    result = run({"nse": NSE}, exit_code=None, timed_out=timed_out, infra_error=infra_error,
                 problem="work/predictions.parquet is over the size cap")
    assert result.execution == Execution(None, timed_out, infra_error, json.dumps({"metrics": {"nse": NSE}}))
    assert (result.grades, result.honesty) == (None, None)
    assert result.artifact_problem == "work/predictions.parquet is over the size cap"
    assert score_query(TASK.answer, result.execution, {"metrics": {}}).outcome is outcome
