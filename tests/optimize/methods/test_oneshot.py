"""`oneshot` (stages/optimize/methods/oneshot.py) against a scripted model whose code is right only
when a plan precedes it: the start (one_turn) earns 0.7 on val (NSE misses its target: 0.4 + 0.6 x 0
for it, 1.0 for RMSE, no baseline), the designer's plan-then-program document 1.0, and the method
keeps the better. The search log holds both candidates; the designer's call is counted apart."""

from __future__ import annotations

import json
import shutil

import pytest
from scibench_testing.limits import limits_with
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, llm_options
from scibench_testing.optimize import PREDICTING_CODE, graded_pools
from scibench_testing.project import ROOT
from scibench_testing.scripted_llm import Request, ScriptedLLM, Turn

from stages.evaluation.agents.llm.options import ModelAccess
from stages.evaluation.agents.llm.workflows import builtin_workflow
from stages.optimize.candidates import Evaluator, document
from stages.optimize.designer import Designer
from stages.optimize.methods import METHODS
from stages.optimize.search import Budget, Search

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
DESIGN = """Here it is.
```yaml
name: plan_then_program
nodes:
  - {id: plan, op: generate, role: planner, prompt: planner, heading: Plan}
  - {id: solve, op: program, role: modeler, prompt: one_turn, inputs: [plan]}
```
"""
ZEROS = PREDICTING_CODE.replace("[1.0, 2.0, 3.0, 5.0, 3.0, 4.0, 6.0, 8.0]", "[0.0] * 8")


def model(request: Request) -> Turn:
    system = request.body["messages"][0]["content"]
    if system.startswith("You design workflows"):
        return Turn(content=DESIGN)
    if "You plan the analysis" in system:
        return Turn(content="1. Read the basins' days.\n2. Predict each day.")
    planned = "## Plan" in request.body["messages"][1]["content"]
    return Turn(content=f"```python\n{PREDICTING_CODE if planned else ZEROS}```")


def test_oneshot_keeps_the_designed_workflow_that_beats_the_start_on_val(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    benchmark = graded_pools(tmp_path / "benchmark")
    with ScriptedLLM(model) as server:
        access = llm_options(server.base_url)
        evaluator = Evaluator(benchmark, access, tmp_path / "search", limits_with(wall_seconds=60), [ROOT])
        designer = Designer.of(ModelAccess.model_validate({key: access[key] for key in
                                                           ("model", "base_url", "api_key_env", "generation")}))
        search = Search(evaluator, "# tiny-graded\n\nPredict qobs_mm_d.", ["q-train"], ["q-val"], designer,
                        Budget(rounds=1, val_queries=1), seed=0)
        found = METHODS["oneshot"](search)
    assert found.name == "plan_then_program"
    start = document(builtin_workflow("one_turn"))[1]
    assert [(step.round, step.parent, step.rewards) for step in search.log] == [
        (0, None, {"q-val": pytest.approx(0.7)}), (1, start, {"q-val": pytest.approx(1.0)})]
    assert search.log[1].workflow == document(found)[1]
    assert designer.asker.usage["calls"] == 1 and designer.asker.fallbacks == 0
    search.write_log(tmp_path / "log" / "search.jsonl")
    steps = [json.loads(line) for line in (tmp_path / "log/search.jsonl").read_text().splitlines()]
    assert [step["mean"] for step in steps] == [pytest.approx(0.7), pytest.approx(1.0)]
    designed = (tmp_path / "log/search.designer.jsonl").read_text()
    assert "Predict qobs_mm_d." in designed and "q-val" not in designed and "0.9" not in designed
