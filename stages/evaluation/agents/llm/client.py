"""The one model client of the evaluation process: the `openai` SDK, answered in process by each query's proxy.

Every built-in loop talks to its model with one shared `openai.AsyncOpenAI` client. Its transport
hands each request to the proxy of the query that sent it (`X-Scibench-Query`: the token its
session registered) without a socket, so the proxy's bounds, forced model and settings, retries,
usage and price accounting and the API key stay exactly what a `command` agent's calls get
through the proxy's Unix socket (`server.py`). The proxy's upstream request blocks, so it runs on
the event loop's executor.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import threading
from collections.abc import Iterator

import httpx
import openai

from stages.evaluation.agents.llm.proxy import Proxy, error_body, role_of

QUERY_HEADER = "X-Scibench-Query"
ROLE_HEADER = "X-Scibench-Role"

_proxies: dict[str, Proxy] = {}
_tokens = itertools.count(1)
_lock = threading.Lock()


@contextlib.contextmanager
def registered(proxy: Proxy) -> Iterator[str]:
    """Make `proxy` answer the calls sent with the token this yields, until the block ends."""
    with _lock:
        token = f"q{next(_tokens)}"
        _proxies[token] = proxy
    try:
        yield token
    finally:
        with _lock:
            _proxies.pop(token, None)


class ProxyTransport(httpx.AsyncBaseTransport):
    """Answers each request with the registered proxy of its query."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """The proxy's answer to one request (404 when no proxy has the request's token)."""
        with _lock:
            proxy = _proxies.get(request.headers.get(QUERY_HEADER, ""))
        if proxy is None:
            return _response(404, json.dumps(error_body("not_found", "no proxy for this query")).encode())
        try:
            body = json.loads(await request.aread())
        except ValueError:
            return _response(400, json.dumps(error_body("invalid_request_error", "not JSON")).encode())
        if not isinstance(body, dict):
            return _response(400, json.dumps(error_body("invalid_request_error", "not a JSON object")).encode())
        status, payload = await asyncio.get_running_loop().run_in_executor(
            None, proxy.complete, body, role_of(request.headers.get(ROLE_HEADER)))
        return _response(status, payload)


def _response(status: int, payload: bytes) -> httpx.Response:
    return httpx.Response(status, content=payload, headers={"content-type": "application/json"})


@functools.cache
def shared_client() -> openai.AsyncOpenAI:
    """The process's client (made once, on the event loop's thread, where it is used)."""
    return openai.AsyncOpenAI(base_url="http://scibench-proxy/v1", api_key="in-process", max_retries=0,
                              http_client=httpx.AsyncClient(transport=ProxyTransport()))
