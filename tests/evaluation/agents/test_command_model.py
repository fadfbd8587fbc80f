"""A `command` agent with `model`: an existing agent framework wrapped as a program, given a model.

The program runs in the sandbox and reaches the model only through the harness's proxy, which holds
the key, forces the model and generation settings, bounds the calls and records usage.
"""

from __future__ import annotations

import shutil

import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, MEAN_CODE, MODEL, run_llm_query
from scibench_testing.project import ROOT
from scibench_testing.scripted_llm import ScriptedLLM, Turn, usage

from stages.evaluation.agents.identity import setup_agent
from stages.params import AgentParams

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) is not installed: the sandbox needs it")
FRAMEWORK = ROOT / "tests" / "data" / "agents" / "framework"


def options(base_url: str, **model) -> dict:
    return {"cmd": "python {agent_dir}/agent.py {workspace}", "agent_dir": str(FRAMEWORK),
            "model": {"model": MODEL, "base_url": base_url, "api_key_env": KEY_ENV, "max_turns": 3,
                      "generation": {"temperature": 0, "max_tokens": 256, "seed": 0}, "retry_backoff_s": 0.05}
            | model}


def test_a_wrapped_framework_reaches_the_model_through_the_proxy_only(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    with ScriptedLLM([Turn(content=f"```python\n{MEAN_CODE}```", usage=usage(120, 30))]) as server:
        ran = run_llm_query(tmp_path, options(server.base_url), kind="command")
    assert ran.score.outcome.value == "answered" and ran.score.pass_rate == 1.0, ran.record.stderr
    (request,) = server.requests
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert (request.body["model"], request.body["temperature"], request.body["max_tokens"]) == (MODEL, 0, 256)
    total = ran.record.usage.total
    assert (total.calls, total.prompt_tokens, total.completion_tokens, ran.record.tokens) == (1, 120, 30, 150)
    assert ran.record.model == MODEL and API_KEY not in ran.record.stdout + ran.record.stderr


def test_moving_a_command_agents_endpoint_keeps_its_key_and_its_model_changes_it():
    def key(**model) -> str:
        return setup_agent("c", AgentParams(kind="command", options=options("http://a:1/v1") | {
            "model": options("http://a:1/v1")["model"] | model})).agent_hash

    assert key(base_url="http://b:2/v1", max_retries=9, per_call_timeout_s=3) == key()
    assert key(model="other") != key() and key(max_turns=9) != key()
