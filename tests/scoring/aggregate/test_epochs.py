"""Repeated runs (stages/scoring/aggregate/epochs.py): the mean of the epochs' scores, its standard
error and spread, outcomes pooled over every run, and pass@k by the unbiased estimator."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from stages.scoring.aggregate.epochs import estimate, pass_at_k, summarize_epochs
from stages.scoring.aggregate.suite import scored_values
from stages.scoring.aggregate.summary import summarize
from stages.scoring.query.outcomes import Outcome
from stages.scoring.query.scorer import QueryScore


def q(outcome: Outcome, pass_rate=0.0, reward=0.0) -> QueryScore:
    return QueryScore(outcome, True, {}, pass_rate, reward)


RIGHT, WRONG = q(Outcome.ANSWERED, 1.0, 1.0), q(Outcome.ANSWERED, 0.0, 0.0)
FAILED = q(Outcome.EXEC_ERROR)


def test_one_epoch_is_summarize_with_an_epochs_block():
    per_task = {"a": [RIGHT, WRONG], "b": [RIGHT]}
    assert summarize_epochs([per_task]) == summarize(per_task) | {
        "epochs": {"n": 1, "scores": [75.0], "se": None, "spread": 0.0}}


def test_three_epochs_give_the_mean_score_its_standard_error_and_spread():
    # Task scores (success x pass share, x 100): a: 50, 0, 100; b: 100, 100, 0.
    epochs = [{"a": [RIGHT, WRONG], "b": [RIGHT]},
              {"a": [FAILED, FAILED], "b": [RIGHT]},
              {"a": [RIGHT, RIGHT], "b": [WRONG]}]
    summary = summarize_epochs(epochs)
    scores = [75.0, 50.0, 50.0]
    se = round(math.sqrt(sum((s - 175 / 3) ** 2 for s in scores) / 2) / math.sqrt(3), 6)
    assert summary["epochs"] == {"n": 3, "scores": scores, "se": se, "spread": 25.0}
    assert summary["score"] == round(175 / 3, 6)
    assert (summary["n_queries"], summary["n_runs"]) == (3, 9)
    assert summary["outcomes"]["answered"] == 7 and summary["outcomes"]["exec_error"] == 2
    assert summary["tasks"]["a"]["score"] == 50.0 and summary["tasks"]["a"]["epoch_scores"] == [50.0, 0.0, 100.0]
    assert summary["tasks"]["b"]["score"] == round(200 / 3, 6) and summary["tasks"]["a"]["n_queries"] == 2


@pytest.mark.parametrize(("n", "c", "k", "expected"), [
    (3, 0, 1, 0.0), (3, 3, 1, 1.0), (3, 1, 1, 1 / 3), (3, 1, 2, 2 / 3), (3, 1, 3, 1.0), (5, 2, 3, 0.9),
])
def test_pass_at_k_is_the_unbiased_estimator(n, c, k, expected):
    assert estimate(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_k_per_hypothesis_task_over_queries_with_enough_scored_runs():
    rows = [("h", "q1", e, "answered", q) for e, q in enumerate([1.0, 0.0, 0.0])]
    rows += [("h", "q2", e, "answered", q) for e, q in enumerate([1.0, 1.0, 0.0])]
    rows += [("h", "q3", 0, "answered", 0.0), ("h", "q3", 1, "infra_error", 0.0), ("h", "q3", 2, "answered", 1.0)]
    rows += [("g", "q4", e, "answered", 1.0) for e in range(3)]  # not a hypothesis task
    frame = pd.DataFrame(rows, columns=["task_id", "query_id", "epoch", "outcome", "q"])
    # pass@1: q1 1/3, q2 2/3, q3 1/2 (two scored runs); pass@2: 2/3, 1, 1; pass@3: q1, q2 only.
    assert pass_at_k(frame, {"h"}) == {"h": {"1": round((1 / 3 + 2 / 3 + 1 / 2) / 3, 6),
                                             "2": round((2 / 3 + 1 + 1) / 3, 6), "3": 1.0}}


def test_the_interval_resamples_queries_each_with_the_mean_of_its_runs():
    frame = pd.DataFrame([("a", "q2", 0, "answered", 1.0), ("a", "q1", 0, "answered", 0.0),
                          ("a", "q2", 1, "answered", 0.0), ("a", "q1", 1, "infra_error", 1.0),
                          ("b", "q3", 0, "answered", 0.5), ("b", "q3", 1, "answered", 0.5)],
                         columns=["task_id", "query_id", "epoch", "outcome", "q"])
    assert {task: list(values) for task, values in scored_values(frame).items()} == {"a": [0.0, 0.5], "b": [0.5]}
