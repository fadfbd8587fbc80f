"""The test helpers that decide whether a test can be trusted: real-sample lookup, Prefect server start."""

from __future__ import annotations

import http.server
import threading

import pytest
from scibench_testing import realdata as realdata_module
from scibench_testing.prefect_server import healthy, listening_pids, start_prefect_server
from scibench_testing.project import offline_env, tracked_files


def test_a_missing_real_sample_skips_by_default(monkeypatch, tmp_path):
    monkeypatch.setattr(realdata_module, "REALDATA", tmp_path)
    monkeypatch.delenv("SCIBENCH_REQUIRE_REALDATA", raising=False)
    with pytest.raises(pytest.skip.Exception, match="real sample not found at .*camels_us"):
        realdata_module.realdata("camels_us")


def test_a_missing_real_sample_fails_when_required(monkeypatch, tmp_path):
    monkeypatch.setattr(realdata_module, "REALDATA", tmp_path)
    monkeypatch.setenv("SCIBENCH_REQUIRE_REALDATA", "1")
    with pytest.raises(pytest.fail.Exception, match="SCIBENCH_REQUIRE_REALDATA=1 requires it"):
        realdata_module.realdata("camels_us")
    (tmp_path / "camels_us").mkdir()
    assert realdata_module.realdata("camels_us") == tmp_path / "camels_us"


def test_the_project_copy_holds_tracked_files_only():
    files = tracked_files()
    assert "params.yaml" in files and "stages/evaluation/journal.py" in files
    assert not [name for name in files if name.startswith((".venv/", "processed/runs/"))]


class Impostor(http.server.BaseHTTPRequestHandler):
    """Another process's server on the port we were about to use: it answers the health check."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"true")

    def log_message(self, *args):
        pass


def test_a_prefect_server_is_up_only_on_a_port_it_holds_itself(tmp_path):
    impostor = http.server.HTTPServer(("127.0.0.1", 0), Impostor)
    taken = impostor.server_address[1]
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    try:
        assert healthy(f"http://127.0.0.1:{taken}")
        server = start_prefect_server(offline_env(tmp_path), tmp_path, port=taken)
    finally:
        impostor.shutdown()
    try:
        assert server.port != taken and server.process.pid in listening_pids(server.port)
        assert healthy(server.url)
        assert "already in use" in (tmp_path / f"prefect-server-{taken}.log").read_text()
    finally:
        server.stop()
