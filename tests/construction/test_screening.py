"""Screening before labelling: only queries no gold could keep are dropped, with the reason."""

from __future__ import annotations

from stages.catalog import load_task
from stages.construction.annotate import Label, gold_problem
from stages.construction.screening import out_of_reach
from stages.layout import CATALOG
from stages.scoring.query.scorer import Grading

TASK = load_task(CATALOG / "camels" / "camels-streamflow-prediction").spec  # nse, kge <= 1; margins 0.05, 0.03
BEST = Label({"metrics": {"nse": 1.0, "kge": 1.0}})


def grading(climatology_nse: float, linear_nse: float | None = 0.5) -> Grading:
    references = {"climatology": {"nse": climatology_nse, "kge": 0.2}}
    if linear_nse is not None:
        references["linear_forcing"] = {"nse": linear_nse, "kge": 0.3}
    return Grading(references)


def test_a_query_whose_references_leave_no_room_is_screened_out_as_verify_would():
    hopeless = grading(0.96)  # nse: 1.0 does not beat 0.96 + 0.05
    reason = out_of_reach(TASK, hopeless)
    assert reason == ("gold cannot clear the task's own targets: nse's best possible value 1.0 does not beat "
                      "the reference models ({'climatology': 0.96, 'linear_forcing': 0.5}; margin 0.05)")
    assert gold_problem(TASK, BEST, hopeless).startswith("gold misses the task's own targets: nse 1.0")


def test_a_query_with_room_left_is_kept_even_if_its_gold_may_still_miss():
    assert out_of_reach(TASK, grading(0.94)) is None  # 1.0 beats 0.94 + 0.05
    assert gold_problem(TASK, BEST, grading(0.94)) is None


def test_a_query_without_any_named_reference_is_screened_out():
    ungraded = Grading({"persistence": {"nse": 0.1, "kge": 0.1}})
    assert out_of_reach(TASK, ungraded).startswith("gold cannot be graded: metric nse: none of its reference models")
    assert gold_problem(TASK, BEST, ungraded).startswith("gold answer is malformed")
