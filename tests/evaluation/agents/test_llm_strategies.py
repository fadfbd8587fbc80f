"""Specification of the other `llm` strategies and the prompt variants, through the real sandbox.

one_turn (one call, its program run once), selfdebug (errors shown back, stop when the program
repeats), reflexion (a reflection call between attempts), workflow (four roles, usage per role),
and MoSciBench's `domain_knowledge` and `scaffold` variants in the prompts the model gets.
"""

from __future__ import annotations

import json
import shutil

import pytest
from scibench_testing.llm_tasks import API_KEY, FAILING_CODE, KEY_ENV, MEAN_CODE, llm_options, run_llm_query
from scibench_testing.scripted_llm import ScriptedLLM, Turn, usage

from stages.scoring.query.outcomes import Outcome

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)


def program(code: str) -> Turn:
    return Turn(content=f"Here it is.\n```python\n{code}```\n")


def test_one_turn_runs_the_one_program_it_gets_once(tmp_path):
    with ScriptedLLM([program(MEAN_CODE)]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, strategy="one_turn"))
    assert (len(server.requests), ran.score.outcome, ran.record.exit_code) == (1, Outcome.ANSWERED, 0)
    assert "tools" not in server.requests[0].body
    assert ran.record.stdout.endswith("scibench-llm stop: done\n")


def test_one_turn_whose_program_fails_ends_with_its_exit_code_and_no_answer(tmp_path):
    with ScriptedLLM([program(FAILING_CODE)]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, strategy="one_turn"))
    assert (len(server.requests), ran.record.exit_code, ran.score.outcome) == (1, 1, Outcome.EXEC_ERROR)


def test_selfdebug_shows_the_error_and_runs_the_fixed_program(tmp_path):
    with ScriptedLLM([program(FAILING_CODE), program(MEAN_CODE)]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, strategy="selfdebug"))
    assert (len(server.requests), ran.score.outcome, ran.record.exit_code) == (2, Outcome.ANSWERED, 0)
    messages = server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[3]["content"].startswith("The program exited with code 1.\nstderr (end):\n")
    assert "FileNotFoundError" in messages[3]["content"]


def test_selfdebug_stops_when_the_program_comes_back_unchanged(tmp_path):
    with ScriptedLLM([program(FAILING_CODE), program(FAILING_CODE), program(MEAN_CODE)]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, strategy="selfdebug"))
    assert (len(server.requests), ran.record.agent_limit, ran.score.outcome) == (2, None, Outcome.EXEC_ERROR)
    assert ran.record.stdout.endswith("scibench-llm stop: code_repeated\n")


def test_selfdebug_at_its_round_bound_is_a_limit_outcome(tmp_path):
    script = [program(FAILING_CODE), program(FAILING_CODE + "# 2\n")]
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, strategy="selfdebug", max_rounds=2))
    assert (len(server.requests), ran.record.agent_limit, ran.score.outcome) == (2, "max_rounds", Outcome.EXEC_ERROR)


def test_reflexion_reflects_on_a_failure_and_the_next_attempt_sees_it(tmp_path):
    script = [program(FAILING_CODE), Turn(content="The file name was wrong: use data/x.csv."), program(MEAN_CODE)]
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, strategy="reflexion"))
    assert ran.score.outcome == Outcome.ANSWERED
    assert [c.role for c in ran.record.usage.calls] == ["actor", "reflection", "actor"]
    assert "## Its feedback\nThe program exited with code 1." in server.requests[1].text()
    assert "## Reflection 1\nThe file name was wrong: use data/x.csv." in server.requests[2].text()
    assert set(ran.record.usage.roles) == {"actor", "reflection"}


def test_the_workflow_runs_four_roles_and_records_usage_per_role(tmp_path):
    prepare = ("import shutil, os\nos.makedirs('work/prep', exist_ok=True)\n"
               "shutil.copy('data/x.csv', 'work/prep/x.csv')\n")
    model = MEAN_CODE.replace("data/x.csv", "work/prep/x.csv")
    script = [
        Turn(content="1. copy x 2. take its mean 3. check", usage=usage(50, 10)),
        Turn(tool_calls=[("python", json.dumps({"code": prepare}))], usage=usage(60, 11)),
        Turn(tool_calls=[("done", json.dumps({"summary": "work/prep/x.csv holds x"}))], usage=usage(70, 12)),
        Turn(tool_calls=[("python", json.dumps({"code": model}))], usage=usage(80, 13)),
        Turn(tool_calls=[("done", json.dumps({"summary": "mean 2.5 written"}))], usage=usage(90, 14)),
        Turn(tool_calls=[("submit", "{}")], usage=usage(100, 15)),
    ]
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, strategy="workflow", max_turns=12))
    record = ran.record
    assert ran.score.outcome == Outcome.ANSWERED
    assert [c.role for c in record.usage.calls] == ["planner", "data_preparation", "data_preparation", "modeler",
                                                   "modeler", "verifier"]
    assert {role: (t.calls, t.prompt_tokens, t.completion_tokens) for role, t in record.usage.roles.items()} == {
        "planner": (1, 50, 10), "data_preparation": (2, 130, 23), "modeler": (2, 170, 27), "verifier": (1, 100, 15)}
    assert record.tokens == 450 + 75
    assert "## Plan\n1. copy x 2. take its mean 3. check" in server.requests[1].text()
    assert "## From the modeler\nmean 2.5 written" in server.requests[5].text()
    systems = [r.body["messages"][0]["content"] for r in server.requests]
    assert "You plan the analysis" in systems[0] and "You are the verifier" in systems[5]


def test_the_prompt_variants_add_domain_notes_and_a_scaffold(tmp_path):
    with ScriptedLLM([program(MEAN_CODE)]) as plain:
        run_llm_query(tmp_path / "plain", llm_options(plain.base_url, strategy="one_turn"))
    with ScriptedLLM([program(MEAN_CODE)]) as both:
        run_llm_query(tmp_path / "both", llm_options(both.base_url, strategy="one_turn", domain_knowledge=True,
                                                     scaffold=True))
    plain_system = plain.requests[0].body["messages"][0]["content"]
    system = both.requests[0].body["messages"][0]["content"]
    assert "Notes on this domain:\nCatchment hydrology" in system and "Notes on this domain" not in plain_system
    assert "Follow this workflow and do not skip a checkpoint" in system
    assert system.startswith(plain_system)
