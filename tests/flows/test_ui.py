"""`make ui`, `make run` and `make ui-stop` use this checkout's Prefect server only (flows/ui.py).

A server of anyone else answering on the port, here an impostor answering Prefect's health check
from this test process, is named and left alone; this checkout's own starts on another port.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from scibench_testing.prefect_server import healthy
from scibench_testing.project import ROOT, offline_env

from flows import ui


class Impostor(http.server.BaseHTTPRequestHandler):
    """Another checkout's server on the port `make ui` would use: it answers the health check."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"true")

    def log_message(self, *args):
        pass


@pytest.fixture
def impostor():
    """The port of a server that is not this checkout's (served by this test process)."""
    server = http.server.HTTPServer(("127.0.0.1", 0), Impostor)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def record_of_this_process(port: int, checkout: Path = ui.CHECKOUT) -> dict:
    """A record as `make ui` writes it, naming this test process as the server."""
    return {"pid": os.getpid(), "started": ui.started_at(os.getpid()), "port": port, "checkout": str(checkout)}


def test_a_server_is_this_checkouts_only_while_its_recorded_process_serves_on_its_port(impostor):
    assert ui.is_ours(record_of_this_process(impostor))
    assert not ui.is_ours(record_of_this_process(impostor, checkout=Path("/gone/checkout")))
    assert not ui.is_ours(record_of_this_process(impostor) | {"started": "1"})  # the pid was reused
    assert not ui.is_ours(record_of_this_process(impostor) | {"port": impostor + 1})
    assert not ui.is_ours(None)


def make(target: str, port: int, cache: Path) -> str:
    """`make -s <target>` in the checkout, without PREFECT_API_URL; its stdout."""
    env = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    return subprocess.run(["make", "-s", "-C", str(ROOT), target, f"UI_PORT={port}", f"CACHE={cache}"], env=env,
                          capture_output=True, text=True, check=True).stdout


def test_make_ui_names_a_server_that_is_not_ours_and_starts_its_own_elsewhere(impostor, tmp_path):
    cache = tmp_path / "cache"
    assert make("api-url", impostor, cache) == "\n"
    env = offline_env(tmp_path) | {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("PREFECT_API_URL", None)
    helper = [sys.executable, "-m", "flows.ui", "--cache", str(cache), "--port", str(impostor)]
    started = subprocess.run([*helper, "start"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert started.returncode == 0, started.stdout + started.stderr
    record = json.loads((cache / "prefect-ui.json").read_text())
    try:
        assert started.stdout.splitlines() == [
            f"make ui: port {impostor} is held by a Prefect server that is not this checkout's (pid {os.getpid()}: "
            f"`{ui.describe_port(impostor).split('`')[1]}`, started in {os.getcwd()}); it is not used.",
            f"Prefect UI: http://127.0.0.1:{record['port']} (not {impostor}: see above)  (this checkout's server,"
            f" pid {record['pid']}; make run reports here; make ui-stop stops it)"]
        assert record["port"] != impostor and record["checkout"] == str(ROOT)
        assert make("api-url", impostor, cache) == f"http://127.0.0.1:{record['port']}/api\n"
        again = subprocess.run([*helper, "start"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert again.stdout == (f"Prefect UI already running: http://127.0.0.1:{record['port']}  (this checkout's"
                                f" server, pid {record['pid']})\n")
    finally:
        stopped = make("ui-stop", impostor, cache)
    assert stopped == f"Prefect UI stopped (pid {record['pid']}, port {record['port']})\n"
    assert ui.started_at(record["pid"]) is None and healthy(f"http://127.0.0.1:{impostor}")
    assert make("api-url", impostor, cache) == "\n"
    assert make("ui-stop", impostor, cache) == "No Prefect UI of this checkout is running\n"
