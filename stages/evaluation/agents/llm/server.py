"""HTTP on a Unix socket for the sandbox: one path, bounded requests, a bounded number of threads.

Everything that arrives here comes from the sandbox, so it is read as hostile input: only
`POST /v1/chat/completions` is served (404 otherwise), the body must carry a `Content-Length` of at
most `MAX_BODY_BYTES` (411 / 413) and be a JSON object (400), a request must arrive within
`READ_TIMEOUT_S`, and at most `MAX_HANDLERS` connections are served at once (more are closed).
"""

from __future__ import annotations

import json
import logging
import socketserver
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from stages.evaluation.agents.llm.proxy import Proxy, error_body, role_of

PATH = "/v1/chat/completions"
MAX_BODY_BYTES = 8 << 20
READ_TIMEOUT_S = 30.0
MAX_HANDLERS = 8

log = logging.getLogger(__name__)


class _Handler(BaseHTTPRequestHandler):
    timeout = READ_TIMEOUT_S
    server: UnixHTTPServer

    def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
        if self.path != PATH:
            return self._reply(404, error_body("not_found", f"only POST {PATH} is served"))
        length = self.headers.get("Content-Length", "")
        if not length.isdigit():
            return self._reply(411, error_body("invalid_request_error", "a Content-Length is required"))
        if int(length) > MAX_BODY_BYTES:
            self.close_connection = True
            return self._reply(413, error_body("invalid_request_error", f"over {MAX_BODY_BYTES} bytes"))
        raw = self.rfile.read(int(length))
        try:
            request = json.loads(raw)
        except (ValueError, RecursionError):
            request = None
        if not isinstance(request, dict):
            return self._reply(400, error_body("invalid_request_error", "the body is not a JSON object"))
        status, body = self.server.proxy.complete(request, role_of(self.headers.get("X-Scibench-Role")))
        self._send(status, body)

    def do_GET(self) -> None:  # noqa: N802
        self._reply(404, error_body("not_found", f"only POST {PATH} is served"))

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET  # noqa: N815

    def _reply(self, status: int, body: dict) -> None:
        self._send(status, json.dumps(body).encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def address_string(self) -> str:
        return "sandbox"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the http.server signature)
        log.debug("llm proxy: " + format, *args)


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """The proxy's HTTP server on a Unix socket, one thread per connection, `MAX_HANDLERS` at most."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, path: Path, proxy: Proxy):
        self.proxy = proxy
        self._slots = threading.BoundedSemaphore(MAX_HANDLERS)
        super().__init__(str(path), _Handler)

    def process_request(self, request, client_address) -> None:
        """Serve the connection on a thread of its own, or close it when all slots are taken."""
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def handle_error(self, request, client_address) -> None:
        """A connection that failed (the sandbox went away mid-call, the session ended) is only logged."""
        log.debug("llm proxy: a connection failed", exc_info=True)

    def process_request_thread(self, request, client_address) -> None:
        """Serve one connection, then free its slot."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def serve(path: Path, proxy: Proxy) -> tuple[UnixHTTPServer, threading.Thread]:
    """Start serving on `path` in a background thread."""
    server = UnixHTTPServer(path, proxy)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              name=f"llm-proxy {path.parent.name}", daemon=True)
    thread.start()
    return server, thread
