"""Specification of the harness's model proxy: retries, infrastructure errors, hostile requests, usage.

Retries and failures run whole queries through the real sandbox against the scripted server; the
request hygiene is checked on the proxy's Unix socket directly; usage flags and cost are pure.
"""

from __future__ import annotations

import json
import shutil
import socket

import httpx
import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, MEAN_CODE, MODEL, SUBMIT, llm_options, python, run_llm_query
from scibench_testing.scripted_llm import ScriptedLLM, Turn, usage

from stages.evaluation.agents.llm import proxy_service
from stages.evaluation.agents.llm.options import Options
from stages.evaluation.agents.llm.proxy import MAX_REFUSALS_RECORDED, Proxy, Settings
from stages.evaluation.agents.llm.upstream import Endpoint, send
from stages.evaluation.agents.llm.usage import call_cost, read_usage
from stages.evaluation.journal import Tokens
from stages.evaluation.program import QueryContext
from stages.params import ModelPrice
from stages.scoring.query.outcomes import Outcome

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
COMPUTE = python(MEAN_CODE)


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)


@needs_bwrap
def test_429_then_500_then_success_is_retried_and_scored_once(tmp_path):
    with ScriptedLLM([Turn(status=429), Turn(status=500), COMPUTE, SUBMIT]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    record = ran.record
    assert (len(server.requests), record.attempts, record.infra_error, ran.score.outcome) == (
        4, 1, None, Outcome.ANSWERED)
    assert [(c.status, c.upstream_attempts) for c in record.usage.calls] == [(200, 3), (200, 1)]
    assert record.usage.total.calls == 2


@needs_bwrap
def test_a_hung_model_api_is_retried_then_an_infra_error_never_scored_as_the_agents_failure(tmp_path):
    hung = [Turn(delay=3.0, content="late")] * 4
    options = llm_options("", per_call_timeout_s=0.5, max_retries=1)
    with ScriptedLLM(hung) as server:
        ran = run_llm_query(tmp_path, options | {"base_url": server.base_url}, infra_retries=1)
    record = ran.record
    assert (len(server.requests), record.attempts, ran.score.outcome) == (4, 2, Outcome.INFRA_ERROR)
    assert record.infra_error == "model API: no complete response within 0.5 s after 2 attempts"
    assert record.exit_code == 3 and record.stdout.endswith("scibench-llm stop: model_unavailable\n")
    assert [(c.status, c.upstream_attempts, c.error) for c in record.usage.calls] == [
        (503, 2, record.infra_error)]
    assert record.usage.discarded.calls == 1  # the first attempt's call, set aside
    assert record.agent_seconds < record.wall_seconds  # time waiting on the API is not the agent's


@needs_bwrap
def test_a_rejected_key_is_an_infra_error_without_retries(tmp_path):
    with ScriptedLLM([Turn(status=401)]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    assert len(server.requests) == 1 and ran.score.outcome == Outcome.INFRA_ERROR
    assert ran.record.infra_error.startswith("model API: HTTP 401 (check the model, base_url and API key)")


@needs_bwrap
def test_cost_comes_from_the_price_table_with_cached_tokens_at_their_own_rate(tmp_path):
    prices = {"version": "test-1", "models": {MODEL: {"input_per_mtok": 0.15, "cached_input_per_mtok": 0.075,
                                                      "output_per_mtok": 0.60}}}
    script = [Turn(tool_calls=COMPUTE.tool_calls, usage=usage(1000, 200, cached=400, reasoning=50)), SUBMIT]
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, prices=prices))
    first = ran.record.usage.calls[0]
    assert first.cost_usd == round((600 * 0.15 + 400 * 0.075 + 200 * 0.60) / 1e6, 10)
    assert (first.cached_tokens, first.reasoning_tokens) == (400, 50)
    assert ran.record.cost_usd == round(first.cost_usd + (100 * 0.15 + 20 * 0.60) / 1e6, 10)
    assert ran.record.usage.prices_version == "test-1"


@pytest.fixture
def proxy_socket(tmp_path):
    """A running proxy session against a scripted server: (client over its socket, server, socket path)."""
    with ScriptedLLM([Turn(content="hi")] * 3) as server:
        access = Options.model_validate(llm_options(server.base_url))
        with proxy_service(access, QueryContext("q", "t", tmp_path)).session() as binding:  # a command agent's
            path = str(next(iter(binding.binds)) / "llm.sock")
            client = httpx.Client(transport=httpx.HTTPTransport(uds=path))
            yield client, server, path
            client.close()


@pytest.mark.parametrize(("method", "path", "content", "status"), [
    ("GET", "/v1/chat/completions", None, 404),
    ("POST", "/v1/models", b"{}", 404),
    ("POST", "/v1/chat/completions", b"{not json", 400),
    ("POST", "/v1/chat/completions", b"[1, 2]", 400),
    ("POST", "/v1/chat/completions", b'{"messages": []}', 400),
    ("POST", "/v1/chat/completions", b'{"messages": [{"role": "user", "content": "x"}], "stream": true}', 400),
    ("POST", "/v1/chat/completions", b"[" * 100_000 + b"]" * 100_000, 400),
])
def test_hostile_requests_are_refused_before_reaching_the_model(proxy_socket, method, path, content, status):
    client, server, _ = proxy_socket
    reply = client.request(method, f"http://llm{path}", content=content)
    assert reply.status_code == status and "message" in reply.json()["error"]
    assert server.requests == []


def test_a_body_without_a_length_or_over_the_cap_is_refused_unread(proxy_socket):
    client, server, path = proxy_socket
    chunked = client.post("http://llm/v1/chat/completions", content=iter([b'{"messages": []}']))
    assert chunked.status_code == 411
    with socket.socket(socket.AF_UNIX) as raw:
        raw.connect(path)
        raw.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: llm\r\nContent-Length: 999999999\r\n\r\n{")
        assert raw.recv(100).startswith(b"HTTP/1.0 413")
    assert server.requests == []


def test_a_valid_request_reaches_the_model_with_the_key_and_comes_back(proxy_socket):
    client, server, _ = proxy_socket
    reply = client.post("http://llm/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}]},
                        headers={"Authorization": "Bearer guessed", "X-Scibench-Role": "Planner!"})
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "hi"
    assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


@pytest.mark.parametrize(("reported", "tokens", "flags"), [
    ({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}, (10, 5, None, None), []),
    ({}, (None, None, None, None), ["missing_prompt_tokens", "missing_completion_tokens"]),
    ({"prompt_tokens": -1, "completion_tokens": 5}, (None, 5, None, None), ["negative_prompt_tokens"]),
    ({"prompt_tokens": 0, "completion_tokens": 600}, (0, 600, None, None),
     ["zero_prompt_tokens", "completion_over_max_tokens"]),
    ({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 99}, (10, 5, None, None), ["total_mismatch"]),
    ({"prompt_tokens": "10", "completion_tokens": True}, (None, None, None, None),
     ["missing_prompt_tokens", "missing_completion_tokens"]),
    ({"prompt_tokens": 10, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 11},
      "completion_tokens_details": {"reasoning_tokens": 6}}, (10, 5, 11, 6),
     ["cached_over_prompt", "reasoning_over_completion"]),
])
def test_usage_that_is_missing_or_implausible_is_none_and_flagged(reported, tokens, flags):
    read, found = read_usage({"usage": reported}, max_tokens=512)
    assert (read.prompt_tokens, read.completion_tokens, read.cached_tokens, read.reasoning_tokens) == tokens
    assert found == flags


def test_no_usage_object_is_flagged_and_an_unknown_price_costs_none():
    assert read_usage({"choices": []}, 512) == (Tokens(), ["missing_usage"])
    flags: list[str] = []
    assert call_cost(Tokens(prompt_tokens=1, completion_tokens=1), None, flags) is None and flags == ["unknown_price"]
    assert call_cost(Tokens(prompt_tokens=10, completion_tokens=0), ModelPrice(input_per_mtok=2, output_per_mtok=4),
                     []) == 2e-05  # cached tokens without a cached price cost as input


def test_a_spent_budget_refuses_every_further_call_and_records_only_the_first_refusals():
    def model(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"model": MODEL, "usage": usage(),
                                         "choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]})

    endpoint = Endpoint(url="http://model/v1/chat/completions", api_key=API_KEY, timeout_s=5, max_retries=0,
                        backoff_s=0, backoff_max_s=0)
    proxy = Proxy(Settings(endpoint, MODEL, {}, 512, max_calls=1, token_budget=None, prices=None),
                  transport=httpx.MockTransport(model))
    statuses = [proxy.complete({"messages": [{"role": "user", "content": "x"}]}, "agent")[0] for _ in range(20)]
    assert statuses == [200] + [403] * 19
    assert [call.refused for call in proxy.calls] == [None] + ["max_turns"] * MAX_REFUSALS_RECORDED
    body = json.loads(proxy.complete({"messages": [{"role": "user", "content": "x"}]}, "agent")[1])
    assert body["error"] == {"type": "scibench_budget_exhausted", "code": "max_turns",
                             "message": "the query's max_turns bound is reached"}


def test_backoff_doubles_honours_retry_after_and_stays_under_its_cap():
    replies = iter([httpx.Response(429, headers={"Retry-After": "30"}), httpx.Response(503),
                    httpx.Response(502), httpx.Response(200, json={"choices": [{"message": {}}]})])
    endpoint = Endpoint(url="http://model/v1/chat/completions", api_key=None, timeout_s=5, max_retries=3,
                        backoff_s=0.1, backoff_max_s=2.0)
    slept: list[float] = []
    with httpx.Client(transport=httpx.MockTransport(lambda request: next(replies))) as client:
        reply = send(client, endpoint, {"messages": []}, sleep=slept.append)
    assert (reply.status, reply.attempts, reply.infra_error) == (200, 4, None)
    assert slept == [2.0, 0.2, 0.4]
    assert reply.waited_seconds >= sum(slept)
