"""The harness side of an agent's model calls: bounds, forced settings, the key, and the record.

The agent's requests come from the sandbox and are untrusted. Only their conversation fields are
forwarded (`messages`, `tools`, `tool_choice`, `parallel_tool_calls`, `response_format`, `stop`);
the model and the generation settings are the configured ones whatever the request says, and the
API key is added here (it never enters the sandbox; it is also cut out of anything sent back).

Bounds: at most `max_calls` calls reach the model and none once the query's tokens reached
`token_budget` (a call in flight may end past it). A call past a bound is answered HTTP 403
`scibench_budget_exhausted` with the bound's name as `code` (the first few such refusals are
recorded as calls). Once the model API has failed (see
upstream.py), every further call is answered HTTP 503 `scibench_model_unavailable`: the harness
then marks the query an infrastructure error, and retries it.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from dataclasses import dataclass

import httpx

from stages.evaluation.agents.llm import upstream, usage
from stages.evaluation.journal import ModelCall
from stages.params import PriceTable

FORWARDED = ("messages", "tools", "tool_choice", "parallel_tool_calls", "response_format", "stop")
BUDGET_ERROR = "scibench_budget_exhausted"
UNAVAILABLE_ERROR = "scibench_model_unavailable"
ROLE = re.compile(r"[a-z][a-z0-9_]{0,39}")
FIELD = re.compile(r"[a-z_]{1,40}")  # a request field named in a flag; any other name shows as `?`
MAX_REFUSALS_RECORDED = 5  # a loop hammering a spent budget must not grow the journal record


@dataclass(frozen=True)
class Settings:
    """What the proxy enforces for one query."""

    endpoint: upstream.Endpoint
    model: str
    generation: dict  # request fields forced on every call
    max_tokens: int
    max_calls: int
    token_budget: int | None
    prices: PriceTable | None


@functools.cache
def shared_client() -> httpx.Client:
    """The upstream client of every proxy in this process.

    Making a client loads its TLS context (~30 ms of CPU); shared, that happens once per process
    instead of once per query, and connections to the model server are kept alive across queries.
    The key is sent per request, never stored in the client.
    """
    return httpx.Client(limits=httpx.Limits(max_connections=None, max_keepalive_connections=64))


def error_body(kind: str, message: str, code: str | None = None) -> dict:
    """An OpenAI-style error body."""
    return {"error": {"type": kind, "code": code, "message": message}}


def role_of(header: str | None) -> str:
    """The caller's role from its `X-Scibench-Role` header (`agent` when absent or malformed)."""
    return header if header is not None and ROLE.fullmatch(header) else "agent"


class Proxy:
    """Forwards one query's calls, within its bounds, and records each call."""

    def __init__(self, settings: Settings, transport: httpx.BaseTransport | None = None):
        self.settings = settings
        self.calls: list[ModelCall] = []
        self.infra_error: str | None = None
        self.waited_seconds = 0.0  # on failed upstream requests and backoff
        self._own_client = httpx.Client(transport=transport) if transport is not None else None
        self._client = self._own_client or shared_client()
        self._lock = threading.Lock()
        self._started = 0
        self._tokens = 0
        self._refusals = 0

    def close(self) -> None:
        """Close the upstream connections of a client of its own (the shared one stays open)."""
        if self._own_client is not None:
            self._own_client.close()

    def complete(self, request: dict, role: str) -> tuple[int, bytes]:
        """Answer one chat-completions request from the sandbox: (HTTP status, JSON body)."""
        problem = _invalid(request)
        if problem:
            return self._answer(400, error_body("invalid_request_error", problem))
        with self._lock:
            refusal = self._refusal()
            if refusal is None:
                self._started += 1
            elif refusal != "unavailable" and self._refusals < MAX_REFUSALS_RECORDED:
                self._refusals += 1
                self.calls.append(ModelCall(role=role, status=403, latency_seconds=0.0, refused=refusal))
        if refusal == "unavailable":
            return self._answer(503, error_body(UNAVAILABLE_ERROR, "the model API is unavailable"))
        if refusal is not None:
            return self._answer(403, error_body(BUDGET_ERROR, f"the query's {refusal} bound is reached", refusal))
        forced, flags = self._forced(request)
        started = time.monotonic()
        reply = upstream.send(self._client, self.settings.endpoint, forced)
        self._record(role, reply, time.monotonic() - started, flags, len(json.dumps(forced)))
        if reply.infra_error is not None:  # the details stay in the harness's record
            return self._answer(503, error_body(UNAVAILABLE_ERROR, "the model API failed; the query is retried"))
        return self._answer(reply.status or 502, reply.body or {})

    def _refusal(self) -> str | None:
        if self.infra_error is not None:
            return "unavailable"
        if self._started >= self.settings.max_calls:
            return "max_turns"
        if self.settings.token_budget is not None and self._tokens >= self.settings.token_budget:
            return "token_budget"
        return None

    def _forced(self, request: dict) -> tuple[dict, list[str]]:
        flags = [f"ignored:{key if FIELD.fullmatch(key) else '?'}"
                 for key in sorted(request) if key not in (*FORWARDED, "model")][:8]
        if request.get("model", self.settings.model) != self.settings.model:
            flags.append("requested_model_ignored")
        forwarded = {key: request[key] for key in FORWARDED if key in request}
        return {**forwarded, "model": self.settings.model, **self.settings.generation}, flags

    def _record(self, role: str, reply: upstream.Reply, seconds: float, flags: list[str],
                request_chars: int) -> None:
        body = reply.body or {}
        tokens, usage_flags = (usage.read_usage(body, self.settings.max_tokens) if reply.status == 200
                               else (None, []))
        flags = flags + usage_flags
        cost, finish, model = None, None, None
        if tokens is not None:
            model = body.get("model") if isinstance(body.get("model"), str) else None
            price = usage.model_price(self.settings.prices, self.settings.model, model)
            cost = usage.call_cost(tokens, price, flags)
            choice = body["choices"][0]
            finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        counted = (tokens.prompt_tokens or 0) + (tokens.completion_tokens or 0) if tokens else 0
        if tokens is not None and (tokens.prompt_tokens is None or tokens.completion_tokens is None):
            counted = max(counted, (request_chars + len(json.dumps(body))) // 4)  # budget only
            flags.append("budget_estimated")
        error = reply.infra_error or (None if reply.status == 200 else upstream.error_message(reply.body))
        error = self._scrubbed(error) if error else None
        call = ModelCall(role=role, status=reply.status or 503, latency_seconds=round(seconds, 3),
                         upstream_attempts=reply.attempts, finish_reason=str(finish)[:40] if finish else None,
                         model=model[:200] if model else None, cost_usd=cost, error=error, flags=flags,
                         **(tokens.model_dump() if tokens else {}))
        with self._lock:
            self.calls.append(call)
            self._tokens += counted
            self.waited_seconds += reply.waited_seconds
            if reply.infra_error is not None and self.infra_error is None:
                self.infra_error = error

    def _scrubbed(self, text: str) -> str:
        key = self.settings.endpoint.api_key
        return text.replace(key, "[api key]") if key else text

    def _answer(self, status: int, body: dict) -> tuple[int, bytes]:
        return status, self._scrubbed(json.dumps(body)).encode()


def _invalid(request: dict) -> str | None:
    """Why a request cannot be forwarded, or None."""
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return "messages must be a non-empty list of objects"
    if "tools" in request and not isinstance(request["tools"], list):
        return "tools must be a list"
    if request.get("stream"):
        return "streaming is not supported here"
    return None
