"""`w4s` (stages/optimize/methods/w4s.py): three refinements, each shown every attempt so far. The
scripted model's code is right only after a plan; the first refinement (a lone program) scores as
the start (0.7), the second (plan then program) 1.0 and is kept; the third prompt lists all three
earlier attempts with their rewards and what became of each run."""

from __future__ import annotations

import shutil

import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV
from scibench_testing.optimize import PLAN_THEN_PROGRAM, PREDICTING_CODE, ZEROS, design, search_on_pools, team_model

from stages.optimize.methods import BUDGETS, METHODS
from stages.optimize.search import Budget

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
LONE = design("lone_program", "{id: solve, op: program, role: modeler, prompt: one_turn}")


def test_w4s_refines_until_the_planned_workflow_and_shows_the_history(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    model = team_model([LONE, PLAN_THEN_PROGRAM], lambda task: PREDICTING_CODE if "## Plan" in task else ZEROS)
    assert BUDGETS["w4s"] == Budget(rounds=3, val_queries=2)
    with search_on_pools(tmp_path, model, Budget(rounds=3, val_queries=1)) as search:
        found = METHODS["w4s"](search)
    assert found.name == "plan_then_program"
    assert [(step.round, step.mean) for step in search.log] == [
        (0, pytest.approx(0.7)), (1, pytest.approx(0.7)), (2, pytest.approx(1.0)), (3, pytest.approx(1.0))]
    assert search.log[3].reused == 1  # the third proposal is the kept document again: no new run
    third = search.designer.asker.log[-1]["messages"][1]["content"]
    assert ("one_turn [solve(program)]: mean reward 0.700" in third
            and "lone_program [solve(program)]: mean reward 0.700" in third
            and "plan_then_program [plan(generate), solve(program <- plan)]: mean reward 1.000" in third)
    assert "\n  - query 1: reward 0.700, exit code 0\n" in third and "q-val" not in third  # each run's fate, unnamed
