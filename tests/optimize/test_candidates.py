"""Candidate workflows through the real harness (stages/optimize/candidates.py): each pool query run
once per candidate, in the sandbox, through the proxy; the reward recomputed from the artifact (the
model's code reports NSE 0.99 and RMSE 0.01; its predictions score 0.875 and 0.5); a new evaluator
on the same folder (a killed search started again) runs nothing it has run; test queries refused."""

from __future__ import annotations

import shutil

import pytest
from scibench_testing.limits import limits_with
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, llm_options
from scibench_testing.optimize import PREDICTING_CODE, graded_pools
from scibench_testing.project import ROOT
from scibench_testing.scripted_llm import ScriptedLLM, Turn

from stages.evaluation.agents.llm.workflows import builtin_workflow
from stages.optimize.baseline import baseline_values
from stages.optimize.candidates import Evaluator
from stages.optimize.reward import HeldOut

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
BASELINE = {"q-train": {"nse": 1.75, "rmse": 0.25}, "q-val": {"nse": 1.75, "rmse": 0.25}}  # reward 0.75 each


def test_each_candidate_runs_once_per_pool_query_and_is_rewarded_on_what_the_harness_recomputes(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    benchmark = graded_pools(tmp_path / "benchmark")
    with ScriptedLLM(lambda request: Turn(content=f"```python\n{PREDICTING_CODE}```")) as server:
        access = llm_options(server.base_url)

        def evaluator() -> Evaluator:
            return Evaluator(benchmark, access, tmp_path / "search", limits_with(wall_seconds=60), [ROOT],
                             baseline=BASELINE, concurrency=2)

        one_turn = builtin_workflow("one_turn")
        first = evaluator().evaluate(one_turn, ["q-train", "q-val"])
        assert (first.rewards, first.reused, len(server.requests)) == ({"q-train": 0.75, "q-val": 0.75}, 0, 2)
        assert first.tokens == 240 and first.seconds > 0
        again = evaluator().evaluate(one_turn, ["q-val", "q-train"])
        # found in the journal, run again by no one, and its cost still the candidate's (any order, one cost)
        assert (again.rewards, again.reused, again.tokens, len(server.requests)) == (first.rewards, 2, 240, 2)
        with pytest.raises(HeldOut, match="q-test is on the test split"):
            evaluator().evaluate(one_turn, ["q-train", "q-test"])
        other = evaluator().evaluate(builtin_workflow("selfdebug"), ["q-train"])
        assert (other.rewards, other.reused, len(server.requests)) == ({"q-train": 0.75}, 0, 3)
        assert other.workflow != first.workflow and len(list((tmp_path / "search/workflows").iterdir())) == 2


def test_the_baseline_is_one_turn_run_once_and_its_recomputed_metrics_are_the_references(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    benchmark = graded_pools(tmp_path / "benchmark")
    with ScriptedLLM(lambda request: Turn(content=f"```python\n{PREDICTING_CODE}```")) as server:
        evaluator = Evaluator(benchmark, llm_options(server.base_url), tmp_path / "search",
                              limits_with(wall_seconds=60), [ROOT], concurrency=2)
        baseline = baseline_values(evaluator, ["q-train", "q-val"])
        assert baseline == {query: {"nse": pytest.approx(0.875), "rmse": pytest.approx(0.5)}
                            for query in ("q-train", "q-val")}
        against = Evaluator(benchmark, llm_options(server.base_url), tmp_path / "search",
                            limits_with(wall_seconds=60), [ROOT], baseline=baseline)
        same = against.evaluate(builtin_workflow("one_turn"), ["q-train", "q-val"])
        assert (same.rewards, same.reused, len(server.requests)) == ({"q-train": 1.0, "q-val": 1.0}, 2, 2)
