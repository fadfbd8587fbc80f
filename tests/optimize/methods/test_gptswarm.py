"""`gptswarm` (stages/optimize/methods/gptswarm.py) on a three-node team whose modeller is right
only when it sees the data note and not the plan: the team as given (the modeller sees both) earns
0.7 on val; seed 1 samples the edge sets 001, 011 and 010, of which 001 (prepare -> solve alone)
earns 1.0 and is kept (seed 0 samples none that beats the team: 011, 100 and 000 all earn 0.7).
No designer is asked. The potential edges, a realisation and the REINFORCE step by hand."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV
from scibench_testing.optimize import PREDICTING_CODE, ZEROS, search_on_pools, team_model

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.methods import BUDGETS, METHODS
from stages.optimize.methods.gptswarm import potential_edges, realise, reinforce
from stages.optimize.search import Budget

TEAM = Workflow.model_validate({"name": "team", "nodes": [
    {"id": "plan", "op": "generate", "role": "planner", "prompt": "planner", "heading": "Plan"},
    {"id": "prepare", "op": "generate", "role": "data_preparation", "prompt": "data_preparation",
     "heading": "Prepared"},
    {"id": "solve", "op": "program", "role": "modeler", "prompt": "one_turn", "inputs": ["plan", "prepare"]}]})


def prepared_unplanned(task: str) -> str:
    return PREDICTING_CODE if "## Prepared" in task and "## Plan" not in task else ZEROS


def test_the_edges_of_a_team_and_a_realisation():
    edges = potential_edges(TEAM)
    assert edges == [("plan", "prepare"), ("plan", "solve"), ("prepare", "solve")]
    realised = realise(TEAM, edges, np.array([True, False, True]))
    assert (realised.name, [node.inputs for node in realised.nodes]) == ("team_edges_101", [[], ["plan"], ["prepare"]])


def test_one_reinforce_step_moves_each_edge_by_its_reward_weighted_choices():
    # rewards 1.0, 0.7, 0.7 (mean 0.8); at theta 0 each edge's x - p is +-0.5:
    # edge 1 never taken: (0.2 * -0.5 - 0.1 * -0.5 - 0.1 * -0.5) / 3 = 0
    # edge 2 taken by the two 0.7s: (0.2 * -0.5 - 0.1 * 0.5 - 0.1 * 0.5) / 3 = -0.2 / 3
    # edge 3 taken by the 1.0 and one 0.7: (0.2 * 0.5 - 0.1 * 0.5 - 0.1 * -0.5) / 3 = 0.1 / 3
    stepped = reinforce(np.zeros(3), [[0, 0, 1], [0, 1, 1], [0, 1, 0]], [1.0, 0.7, 0.7])
    assert stepped == pytest.approx([0.0, -0.2 / 3, 0.1 / 3])


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_gptswarm_keeps_the_realisation_that_beats_the_team_as_given(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    assert BUDGETS["gptswarm"] == Budget(rounds=3, val_queries=2)
    with search_on_pools(tmp_path, team_model(["unused"], prepared_unplanned), Budget(rounds=3, val_queries=1),
                         seed=1, start=TEAM) as search:
        found = METHODS["gptswarm"](search)
        as_given = search.evaluator.evaluate(TEAM, ["q-val"]).mean
    assert as_given == pytest.approx(0.7)
    assert (found.name, [node.inputs for node in found.nodes]) == ("team_edges_001", [[], [], ["prepare"]])
    assert [(step.round, step.mean) for step in search.log] == [
        (1, pytest.approx(1.0)), (2, pytest.approx(0.7)), (3, pytest.approx(0.7))]
    assert [search.seen[step.workflow].name for step in search.log] == ["team_edges_001", "team_edges_011",
                                                                       "team_edges_010"]
    assert search.designer.asker.usage["calls"] == 0
