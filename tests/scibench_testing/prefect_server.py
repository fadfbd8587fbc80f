"""A local Prefect server for tests, started so that no other process can take its port.

Picking a free port and then starting a server on it races: between the probe and uvicorn's bind
(seconds later, after imports and database migrations) another process may take the port, and a
health check on it may then answer from that other process's server. So a server counts as up only
when its health endpoint answers *and* the listening socket on the port belongs to our process
(read from /proc); a server that exits (a lost bind) or never answers is retried on a fresh port,
and when every attempt fails the test fails with the server's log.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

STARTUP_SECONDS = 120
ATTEMPTS = 3


@dataclass
class PrefectServer:
    """A running `prefect server start` (its own session, so it is stopped as a group)."""

    process: subprocess.Popen
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Signal the server's process group and reap it (SIGKILL when it ignores SIGTERM)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def free_port() -> int:
    """A port that was free a moment ago (the caller must still check that it got it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening_pids(port: int) -> set[int]:
    """The pids holding a listening TCP socket on `port` (Linux /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                    inodes.add(f"socket:[{fields[9]}]")
    pids = set()
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        with contextlib.suppress(OSError):
            if os.readlink(fd) in inodes:
                pids.add(int(fd.parts[2]))
    return pids


def healthy(url: str) -> bool:
    """Whether `url`/api/health answers."""
    try:
        with urllib.request.urlopen(f"{url}/api/health", timeout=2):
            return True
    except OSError:
        return False


def start_prefect_server(env: dict[str, str], log_dir: Path, port: int | None = None) -> PrefectServer:
    """Start a Prefect server (UI and API) and return it once it answers on a port it holds.

    Args:
        env: The environment (PREFECT_HOME decides the database; PREFECT_API_URL is dropped).
        log_dir: Where `prefect-server-<port>.log` is written.
        port: Try this port first (a restart on the same database); fresh ports after a failure.
    """
    failures = []
    for _ in range(ATTEMPTS):
        port = port or free_port()
        server = _launch(env, log_dir, port)
        if _wait_until_up(server):
            return server
        server.stop(signal.SIGKILL)
        failures.append(f"--- port {port} ({server.log}):\n{server.log.read_text()[-3000:]}")
        port = None
    pytest.fail(f"the Prefect server did not start in {ATTEMPTS} attempts:\n" + "\n".join(failures))


def _launch(env: dict[str, str], log_dir: Path, port: int) -> PrefectServer:
    url = f"http://127.0.0.1:{port}"
    server_env = {k: v for k, v in env.items() if k != "PREFECT_API_URL"} | {"PREFECT_UI_API_URL": f"{url}/api"}
    log = log_dir / f"prefect-server-{port}.log"
    with open(log, "wb") as handle:
        process = subprocess.Popen(
            ["prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env=server_env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    return PrefectServer(process, port, log)


def _wait_until_up(server: PrefectServer) -> bool:
    """Wait for our own process to answer on the port; False when it exits or times out."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return False
        if healthy(server.url) and server.process.pid in listening_pids(server.port):
            return True
        time.sleep(0.5)
    return False
