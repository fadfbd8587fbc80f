"""`autoagents` (stages/optimize/methods/autoagents.py): the explorer is the system handed in; on
val each query's team is composed by the model (here plan then program) and scores 1.0 where the
one-turn start scores 0.7."""

from __future__ import annotations

import shutil

import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV
from scibench_testing.optimize import PLAN_THEN_PROGRAM, PREDICTING_CODE, ZEROS, search_on_pools, team_model

from stages.evaluation.agents.llm.workflows import builtin_workflow
from stages.optimize.methods import METHODS, QUERY_LEVEL
from stages.optimize.search import Budget

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


def test_autoagents_hands_in_the_explorer_which_composes_per_query(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    model = team_model([PLAN_THEN_PROGRAM], lambda task: PREDICTING_CODE if "## Plan" in task else ZEROS)
    with search_on_pools(tmp_path, model, Budget(rounds=1, val_queries=1)) as search:
        found = METHODS["autoagents"](search)
        one_turn = search.evaluator.evaluate(builtin_workflow("one_turn"), ["q-val"]).mean
    assert found == builtin_workflow("explorer") and "autoagents" in QUERY_LEVEL
    assert [(step.round, step.mean) for step in search.log] == [(0, pytest.approx(1.0))]
    assert one_turn == pytest.approx(0.7)
