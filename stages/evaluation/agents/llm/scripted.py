"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benches of LLM agents.

A real HTTP server on a random port that answers `POST /v1/chat/completions` with the next scripted
`Turn` (text, tool calls, finish reason, usage or none, an HTTP status, a delay), or with what a
function of the request returns, and records every request it got (body and headers). When the
script runs out it answers 400 `no scripted turn left`, which no client retries. Each request is
served on a thread of its own, so a delay stands for a model's latency with any number in flight.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT = "default"


@dataclass(frozen=True)
class Turn:
    """One scripted answer. `usage=None` leaves usage out; `body` replaces the whole response."""

    content: str | None = None
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (function name, arguments text)
    finish_reason: str | None = None  # default: tool_calls when there are some, else stop
    usage: dict | None | str = DEFAULT
    status: int = 200
    delay: float = 0.0
    model: str | None = None  # the model id reported (default: the one requested)
    body: bytes | None = None


def usage(prompt: int = 100, completion: int = 20, cached: int = 0, reasoning: int = 0) -> dict:
    """A usage object as OpenAI reports it."""
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": reasoning}}


@dataclass(frozen=True)
class Request:
    """One request the server got."""

    path: str
    headers: dict[str, str]
    body: Any

    def text(self) -> str:
        """Every message's content, joined (what the model was shown)."""
        return "\n".join(str(m.get("content")) for m in self.body.get("messages", []))


def completion(turn: Turn, requested_model: str, number: int) -> dict:
    """The response body of a scripted turn."""
    calls = [{"id": f"call_{number}_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
             for i, (name, arguments) in enumerate(turn.tool_calls)]
    message: dict = {"role": "assistant", "content": turn.content}
    if calls:
        message["tool_calls"] = calls
    body = {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0,
            "model": turn.model or requested_model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": turn.finish_reason or ("tool_calls" if calls else "stop")}]}
    if turn.usage is not None:
        body["usage"] = usage() if turn.usage == DEFAULT else turn.usage
    return body


class ScriptedLLM:
    """The server; use as a context manager. `base_url` is what an agent's options name."""

    def __init__(self, script: list[Turn] | Callable[[Request], Turn]):
        self.script = script
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._next = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        """The server's `/v1` URL."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def turn_for(self, request: Request) -> tuple[Turn | None, int]:
        """Record the request; the turn that answers it (None when the script ran out)."""
        with self._lock:
            self.requests.append(request)
            number = len(self.requests)
            if callable(self.script):
                return self.script(request), number
            if self._next >= len(self.script):
                return None, number
            self._next += 1
            return self.script[self._next - 1], number


def _handler(server: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode(errors="replace")
            request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            turn, number = server.turn_for(request)
            if turn is None:
                return self._send(400, json.dumps({"error": {"message": "no scripted turn left"}}).encode())
            time.sleep(turn.delay)
            if turn.body is not None:
                return self._send(turn.status, turn.body)
            if turn.status != 200:
                return self._send(turn.status, json.dumps({"error": {"message": f"scripted {turn.status}"}}).encode())
            model = body.get("model", "") if isinstance(body, dict) else ""
            self._send(200, json.dumps(completion(turn, model, number)).encode())

        def _send(self, status: int, data: bytes) -> None:
            with contextlib.suppress(OSError):  # the client may have given up (a timeout test)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        def log_message(self, format: str, *args) -> None:  # noqa: A002
            pass

    return Handler
