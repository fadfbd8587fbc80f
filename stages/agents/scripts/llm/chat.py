"""The model, reached through the harness's proxy on a Unix socket, and the loop's reasons to stop.

Every call carries the caller's role (`X-Scibench-Role`) so the harness can count usage per role.
The proxy answers a call past a bound with HTTP 403 `scibench_budget_exhausted` (the bound in
`code`) and a failed model API with 503 `scibench_model_unavailable`; both end the loop, as do a
reply cut at `max_tokens` (`finish_length`), the loop's own turn and wall-clock bounds, and a
request the model server refused (`request_rejected`, e.g. a context too long).

The client is the standard library's `http.client` on the Unix socket: the loop starts in every
query's sandbox, and importing an SDK (`openai` takes ~0.7 CPU-seconds) would cost more than the
sandbox itself.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from dataclasses import dataclass, field

BUDGET_ERROR = "scibench_budget_exhausted"
UNAVAILABLE_ERROR = "scibench_model_unavailable"
WALL_MARGIN_S = 2.0


class Stop(Exception):
    """The loop stops here; `reason` names why (a bound, or the model API failing)."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True)
class Reply:
    """One assistant message."""

    content: str
    tool_calls: list[dict] = field(default_factory=list)  # {id, type, function: {name, arguments}}
    finish_reason: str | None = None

    def message(self) -> dict:
        """The message to append to the conversation."""
        # Content may be null only beside tool calls (servers reject an assistant message without both).
        message: dict = {"role": "assistant", "content": self.content or (None if self.tool_calls else "")}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over the proxy's Unix socket."""

    def __init__(self, socket_path: str, timeout: float):
        super().__init__("llm", timeout=timeout)
        self.socket_path = socket_path

    def connect(self) -> None:
        """Connect to the socket (the host name is only what the Host header says)."""
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


class Chat:
    """Chat completions through the proxy, within the loop's turn and wall-clock bounds."""

    def __init__(self, socket_path: str, model: str, max_turns: int, deadline: float):
        self.socket_path = socket_path
        self.model, self.max_turns, self.deadline = model, max_turns, deadline
        self.calls = 0

    def remaining(self) -> float:
        """Seconds left of the wall budget, less a margin for handing in."""
        return self.deadline - time.monotonic() - WALL_MARGIN_S

    def complete(self, messages: list[dict], role: str, tools: list[dict] | None = None) -> Reply:
        """One call; raises `Stop` at a bound, a failed model API or a reply cut at max_tokens."""
        if self.calls >= self.max_turns:
            raise Stop("max_turns")
        if self.remaining() <= 0:
            raise Stop("wall_budget")
        self.calls += 1
        request = {"model": self.model, "messages": messages, **({"tools": tools} if tools else {})}
        status, body = self._post(json.dumps(request).encode(), role)
        if not 200 <= status < 300:
            raise _stop_for(status, body)
        choice = body["choices"][0]
        message = choice.get("message") or {}
        calls = [{"id": call.get("id"), "type": "function",
                  "function": {"name": call["function"].get("name"),
                               "arguments": call["function"].get("arguments")}}
                 for call in (message.get("tool_calls") or []) if isinstance(call.get("function"), dict)]
        reply = Reply(message.get("content") or "", calls, choice.get("finish_reason"))
        print(f"[{role}] call {self.calls}: finish {reply.finish_reason}, {len(calls)} tool calls, "
              f"{self.remaining():.0f} s left", flush=True)
        if reply.finish_reason == "length":
            raise Stop("finish_length")
        return reply

    def _post(self, payload: bytes, role: str) -> tuple[int, dict]:
        """POST one request to the proxy: (status, JSON body); a body that is not JSON reads as `{}`."""
        connection = _UnixConnection(self.socket_path, max(self.remaining(), 0.001))
        try:
            connection.request("POST", "/v1/chat/completions", body=payload, headers={
                "Content-Type": "application/json", "X-Scibench-Role": role})
            response = connection.getresponse()
            status, data = response.status, response.read()
        except TimeoutError:
            raise Stop("wall_budget", "no reply before the wall budget ran out") from None
        except (OSError, http.client.HTTPException) as error:
            raise Stop("model_unavailable", f"connection to the proxy failed ({error!r})") from None
        finally:
            connection.close()
        try:
            body = json.loads(data)
        except ValueError:
            body = {}
        return status, body if isinstance(body, dict) else {}


def _stop_for(status: int, body: dict) -> Stop:
    detail = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
    if detail.get("type") == BUDGET_ERROR:
        return Stop(str(detail.get("code") or "token_budget"))
    if detail.get("type") == UNAVAILABLE_ERROR:
        return Stop("model_unavailable", str(detail.get("message")))
    return Stop("request_rejected", f"HTTP {status}: {str(detail.get('message'))[:300]}")
