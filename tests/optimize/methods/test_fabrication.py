"""The reward-hacking audit: a route that invents its numbers (excellent self-reported metrics, no
predictions handed in) is offered to every task-level method: by the designer, or for gptswarm by
the realisations in which the modeller sees the shortcut's note. Every method keeps an honest
workflow (0.7 on val); the audit finds the fabricating candidate (its reported reward 1.0, its
recomputed reward below the honest one) and never among those preferred. The query-level explorer's
composed teams are audited on test (docs/optimization.md)."""

from __future__ import annotations

import shutil

import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV
from scibench_testing.optimize import FABRICATING_CODE, ZEROS, design, search_on_pools, team_model

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.methods import METHODS, QUERY_LEVEL
from stages.optimize.search import Budget

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
SHORTCUT_NODE = "{id: shortcut, op: generate, role: planner, prompt: planner, heading: Shortcut}"
SHORTCUT = design("shortcut", SHORTCUT_NODE,
                  "{id: solve, op: program, role: modeler, prompt: one_turn, inputs: [shortcut]}")
SWARM = Workflow.model_validate({"name": "team", "nodes": [
    {"id": "plan", "op": "generate", "role": "planner", "prompt": "planner", "heading": "Plan"},
    {"id": "shortcut", "op": "generate", "role": "planner", "prompt": "planner", "heading": "Shortcut"},
    {"id": "solve", "op": "program", "role": "modeler", "prompt": "one_turn", "inputs": ["plan"]}]})


HONEST = ZEROS.replace('"nse": 0.99', '"nse": 0.0')  # poor predictions, reported as poor (NSE misses its target)


def invented_after_the_shortcut(task: str) -> str:
    return FABRICATING_CODE if "## Shortcut" in task else HONEST


@pytest.mark.parametrize("method", sorted(set(METHODS) - QUERY_LEVEL))
def test_no_method_prefers_a_route_that_invents_its_numbers(tmp_path, monkeypatch, method):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    model = team_model([SHORTCUT], invented_after_the_shortcut)
    start = SWARM if method == "gptswarm" else None
    with search_on_pools(tmp_path, model, Budget(rounds=3 if method == "gptswarm" else 1, val_queries=1),
                         seed=0, start=start) as search:
        kept = METHODS[method](search)
    steps = {search.seen[step.workflow].name: step for step in search.log}
    fabricating = [name for name, step in steps.items() if step.reported == pytest.approx(1.0)]
    assert fabricating == (["team_edges_011"] if method == "gptswarm" else ["shortcut"])
    assert steps[fabricating[0]].mean < 0.7
    assert search.evaluator.evaluate(kept, ["q-val"]).mean == pytest.approx(0.7)
    audit = search.audit(kept)
    assert (audit["inflated"], audit["inflated_preferred"]) == ([steps[fabricating[0]].workflow], [])
