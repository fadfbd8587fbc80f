"""Specification of how an `llm` agent is configured and keyed.

The journal key covers what the agent is (kind, strategy, model, generation settings, prompt
variants, bounds, the loop's code) and not how the model is reached (endpoint, key variable,
timeouts, retries, prices): a moved endpoint must not re-run finished queries.
"""

from __future__ import annotations

import shutil

import pytest
from pydantic import ValidationError
from scibench_testing.llm_tasks import KEY_ENV, llm_options

from stages.evaluation.agents import llm
from stages.evaluation.agents.identity import setup_agent
from stages.evaluation.journal import record_key
from stages.evaluation.program import QueryContext
from stages.params import AgentParams, PriceTable

BASE = llm_options("https://api.example.org/v1")


def key_of(options: dict, prices: PriceTable | None = None) -> str:
    agent = setup_agent("a", AgentParams(kind="llm", options=options), prices=prices)
    return record_key("task-hash", "query-id", agent.agent_hash, agent.model)


@pytest.mark.parametrize("transport", [
    {"base_url": "http://10.0.0.7:8000/v1"}, {"api_key_env": "OTHER_KEY"}, {"api_key_env": None},
    {"per_call_timeout_s": 5}, {"max_retries": 9}, {"retry_backoff_s": 7}, {"retry_backoff_max_s": 1},
    {"prices": {"version": "2099-01", "models": {"m": {"input_per_mtok": 1, "output_per_mtok": 2}}}},
])
def test_moving_the_endpoint_or_changing_transport_keeps_the_journal_key(transport):
    assert key_of(BASE | transport) == key_of(BASE)
    assert key_of(BASE, prices=PriceTable(version="x")) == key_of(BASE)


@pytest.mark.parametrize("change", [
    {"strategy": "workflow"}, {"model": "other-model"}, {"generation": {"temperature": 0.7}},
    {"generation": {"temperature": 0, "max_tokens": 512, "seed": 1}}, {"domain_knowledge": True},
    {"scaffold": True}, {"max_turns": 9}, {"token_budget": 10}, {"code_timeout_s": 1},
])
def test_what_defines_the_agent_changes_the_journal_key(change):
    assert key_of(BASE | change) != key_of(BASE)


def test_defaults_written_out_key_the_same_as_left_out():
    explicit = BASE | {"domain_knowledge": False, "scaffold": False,
                       "generation": BASE["generation"] | {"top_p": None, "max_tokens_field": "max_tokens"}}
    assert key_of(explicit) == key_of(BASE)


def test_the_loops_code_is_part_of_the_key(tmp_path, monkeypatch):
    before = key_of(BASE)
    copy = shutil.copytree(llm.LOOP, tmp_path / "llm")
    (copy / "prompts.py").write_text((copy / "prompts.py").read_text() + "\n# a prompt edit\n")
    monkeypatch.setattr(llm, "LOOP", copy)
    edited = key_of(BASE)
    assert edited != before
    (copy / "upstream.py").write_text("# how the harness reaches the model: not the agent\n")
    assert key_of(BASE) == edited


def test_unknown_options_fail_at_setup():
    with pytest.raises(ValidationError, match="temprature"):
        key_of(BASE | {"temprature": 0})
    with pytest.raises(ValidationError, match="strategy"):
        key_of(BASE | {"strategy": "autogpt"})


def test_a_missing_api_key_stops_the_run_with_the_variables_name(monkeypatch, tmp_path):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(llm.MissingApiKey, match=KEY_ENV):
        llm.program(BASE, QueryContext("q", "t", tmp_path))


def test_the_loop_gets_its_options_but_neither_the_key_nor_the_endpoint(monkeypatch, tmp_path):
    monkeypatch.setenv(KEY_ENV, "sk-secret")
    agent = llm.program(BASE, QueryContext("q", "t", tmp_path))
    assert agent.loop is not None and agent.argv == [] and agent.agent_dir is None
    assert "sk-secret" not in repr(agent) and "api.example.org" not in str(agent.env)
    assert agent.service.settings.endpoint.url == "https://api.example.org/v1/chat/completions"


def test_a_workflow_document_is_the_agent_by_what_it_holds_not_where_it_lies(tmp_path):
    import shutil as files

    from stages.evaluation.agents.llm.workflows import BUILTIN

    first, second = tmp_path / "a.yaml", tmp_path / "elsewhere.yaml"
    files.copy(BUILTIN / "react.yaml", first)
    files.copy(BUILTIN / "react.yaml", second)
    by_document = {key: value for key, value in BASE.items() if key != "strategy"}
    assert key_of(by_document | {"workflow": str(first)}) == key_of(by_document | {"workflow": str(second)})
    assert key_of(by_document | {"workflow": str(first)}) == key_of(BASE | {"strategy": "react"})
    second.write_text(second.read_text().replace("finish: submit", "finish: submit, turns: 3"))
    assert key_of(by_document | {"workflow": str(second)}) != key_of(by_document | {"workflow": str(first)})
    with pytest.raises(ValidationError, match="one of a built-in `strategy`, a `workflow` document or a `workflows`"):
        key_of(BASE | {"workflow": str(first)})
