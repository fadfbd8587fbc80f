"""`oneshot` (stages/optimize/methods/oneshot.py) against a scripted model whose code is right only
when a plan precedes it: the start (one_turn) earns 0.7 on val (NSE misses its target: 0.4 + 0.6 x 0
for it, 1.0 for RMSE, no baseline), the designer's plan-then-program document 1.0, and the method
keeps the better. The search log holds both candidates; the designer's call is counted apart."""

from __future__ import annotations

import json
import shutil

import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV
from scibench_testing.optimize import PLAN_THEN_PROGRAM, PREDICTING_CODE, ZEROS, search_on_pools, team_model

from stages.evaluation.agents.llm.workflows import builtin_workflow
from stages.optimize.candidates import document
from stages.optimize.methods import METHODS
from stages.optimize.search import Budget

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


def planned(task: str) -> str:
    """Right code only after a plan."""
    return PREDICTING_CODE if "## Plan" in task else ZEROS


def test_oneshot_keeps_the_designed_workflow_that_beats_the_start_on_val(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    with search_on_pools(tmp_path, team_model([PLAN_THEN_PROGRAM], planned), Budget(rounds=1, val_queries=1)) as search:
        found = METHODS["oneshot"](search)
    assert found.name == "plan_then_program"
    start = document(builtin_workflow("one_turn"))[1]
    assert [(step.round, step.parent, step.rewards) for step in search.log] == [
        (0, None, {"q-val": pytest.approx(0.7)}), (1, start, {"q-val": pytest.approx(1.0)})]
    assert search.log[1].workflow == document(found)[1]
    assert search.designer.asker.usage["calls"] == 1 and search.designer.asker.fallbacks == 0
    search.write_log(tmp_path / "log" / "search.jsonl")
    steps = [json.loads(line) for line in (tmp_path / "log/search.jsonl").read_text().splitlines()]
    assert [step["mean"] for step in steps] == [pytest.approx(0.7), pytest.approx(1.0)]
    designed = (tmp_path / "log/search.designer.jsonl").read_text()
    assert "Predict qobs_mm_d." in designed and "q-val" not in designed and "0.9" not in designed
