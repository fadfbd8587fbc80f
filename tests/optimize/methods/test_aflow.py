"""`aflow` (stages/optimize/methods/aflow.py): the mixed selection probability by hand, and a search
whose first change (a plan before the program) lifts val from 0.7 to 1.0; the second round's parent
is drawn by that probability (seed 0 draws the planned workflow) and its experience is shown."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV
from scibench_testing.optimize import (
    PLAN_NODE,
    PLAN_THEN_PROGRAM,
    PREDICTING_CODE,
    ZEROS,
    design,
    search_on_pools,
    team_model,
)

from stages.optimize.candidates import document
from stages.optimize.methods import BUDGETS, METHODS
from stages.optimize.methods.aflow import mixed_probability
from stages.optimize.search import Budget

CHECKED = design("plan_program_check", PLAN_NODE,
                 "{id: solve, op: program, role: modeler, prompt: one_turn, inputs: [plan]}", "{id: check, op: verify}")


def test_the_mixed_probability_is_aflows():
    # 0.3 / 2 + 0.7 * exp(0) / (exp(0) + exp(0.2 * (70 - 100))), and the rest
    top = 0.15 + 0.7 / (1 + np.exp(-6.0))
    assert mixed_probability([1.0, 0.7]) == pytest.approx([top, 1 - top])
    assert mixed_probability([0.5, 0.5, 0.5]) == pytest.approx([1 / 3] * 3)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_aflow_grows_the_tree_from_the_better_child(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    model = team_model([PLAN_THEN_PROGRAM, CHECKED], lambda task: PREDICTING_CODE if "## Plan" in task else ZEROS)
    assert BUDGETS["aflow"] == Budget(rounds=2, val_queries=2)
    with search_on_pools(tmp_path, model, Budget(rounds=2, val_queries=1), seed=0) as search:
        found = METHODS["aflow"](search)
    planned = document(search.seen[search.log[1].workflow])[1]
    assert [(step.round, step.mean) for step in search.log] == [
        (0, pytest.approx(0.7)), (1, pytest.approx(1.0)), (2, pytest.approx(1.0))]
    assert search.log[2].parent == planned  # seed 0 draws the planned workflow as the second parent
    assert found.name == "plan_then_program"  # the check adds nothing: the earlier of a tie is kept
    second = search.designer.asker.log[-1]["messages"][1]["content"]
    assert "Change this workflow in one way" in second and "- none yet" in second
