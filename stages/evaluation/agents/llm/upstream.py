"""One chat-completions request to the model server, retried on what a retry can fix.

Retried with exponential backoff (`Retry-After` honoured, both capped): HTTP 408, 409, 425, 429 and
5xx, a timeout (the whole response must arrive within the per-call timeout, however slowly the
server trickles it), a lost connection, and a 200 that is not a completion. When the retries run
out, or the server answers 401, 403 or 404 (a wrong key, model or endpoint: no retry helps), the
call is an infrastructure failure of the model API, never the agent's. Any other status (400 for
a context too long, 422, ...) is the agent's request being refused and goes back to it as is.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

RETRY_STATUS = frozenset({408, 409, 425, 429})
CONFIG_STATUS = frozenset({401, 403, 404})
MAX_RESPONSE_BYTES = 32 << 20


@dataclass(frozen=True)
class Endpoint:
    """Where and how to send requests."""

    url: str  # .../v1/chat/completions
    api_key: str | None = field(repr=False)
    timeout_s: float
    max_retries: int
    backoff_s: float
    backoff_max_s: float


@dataclass(frozen=True)
class Reply:
    """How one call ended, after any retries."""

    status: int | None  # the last HTTP status (None: no response at all)
    body: dict | None  # the parsed response (or error) body
    attempts: int  # requests sent
    waited_seconds: float  # spent on failed requests and backoff
    infra_error: str | None = None  # the model API failed: not the agent's doing


class _Retry(Exception):
    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.retry_after = retry_after


def send(client: httpx.Client, endpoint: Endpoint, request: dict,
         sleep: Callable[[float], None] = time.sleep) -> Reply:
    """POST `request` until it succeeds, is refused for good, or the retries run out."""
    payload = json.dumps(request).encode()
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    waited, reason = 0.0, ""
    for attempt in range(1, endpoint.max_retries + 2):
        started = time.monotonic()
        try:
            status, body = _once(client, endpoint, payload, headers)
        except _Retry as retry:
            reason = str(retry)
            waited += time.monotonic() - started
            if attempt > endpoint.max_retries:
                break
            pause = min(endpoint.backoff_s * 2 ** (attempt - 1), endpoint.backoff_max_s)
            if retry.retry_after is not None:
                pause = min(max(pause, retry.retry_after), endpoint.backoff_max_s)
            sleep(pause)
            waited += pause
            continue
        if status in CONFIG_STATUS:
            return Reply(status, body, attempt, waited,
                         f"model API: HTTP {status} (check the model, base_url and API key): {error_message(body)}")
        return Reply(status, body, attempt, waited)
    return Reply(None, None, endpoint.max_retries + 1, waited,
                 f"model API: {reason} after {endpoint.max_retries + 1} attempts")


def _once(client: httpx.Client, endpoint: Endpoint, payload: bytes, headers: dict) -> tuple[int, dict]:
    """One request: (status, JSON body), or `_Retry` with the reason."""
    deadline = time.monotonic() + endpoint.timeout_s
    data = bytearray()
    try:
        with client.stream("POST", endpoint.url, content=payload, headers=headers,
                           timeout=httpx.Timeout(endpoint.timeout_s)) as response:
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > MAX_RESPONSE_BYTES:
                    raise _Retry(f"a response over {MAX_RESPONSE_BYTES} bytes")
                if time.monotonic() > deadline:
                    raise _Retry(f"no complete response within {endpoint.timeout_s} s")
            status, retry_after = response.status_code, response.headers.get("retry-after")
    except httpx.TimeoutException:
        raise _Retry(f"no complete response within {endpoint.timeout_s} s") from None
    except httpx.TransportError as error:
        raise _Retry(f"connection failed ({type(error).__name__})") from None
    if status in RETRY_STATUS or status >= 500:
        raise _Retry(f"HTTP {status}", _seconds(retry_after))
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if status == 200 and not (isinstance(body, dict) and isinstance(body.get("choices"), list)
                              and body["choices"]):
        raise _Retry("HTTP 200 without a completion")
    if not isinstance(body, dict):
        body = {"error": {"message": bytes(data[:2000]).decode(errors="replace")}}
    return status, body


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def error_message(body: dict | None) -> str:
    """The `error.message` of an error body (the first 300 characters)."""
    error = (body or {}).get("error")
    message = error.get("message") if isinstance(error, dict) else error
    return str(message)[:300]
