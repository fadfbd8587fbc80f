"""This process's own Prefect server, for flows run without a configured API.

Without an API, Prefect starts a temporary server as a subprocess that outlives a SIGKILLed flow
process (reparented to init). `flows.prefect_api` starts this one instead, as a child that the
kernel kills with this process (prctl PR_SET_PDEATHSIG; `python -m flows.temporary_server <port>
<parent pid>` serves Prefect's own app as Prefect's temporary server does). The signal fires when
the *thread* that forked the child exits, so the child is started from the thread that runs the
entry point, which lives as long as the process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from stages.ports import free_port, healthy
from stages.sandbox import debris

STARTUP_SECONDS = 120
ATTEMPTS = 3  # a temporary server that loses its port to another process is started on a fresh one


@dataclass
class TemporaryServer:
    """This process's own Prefect server (a child process)."""

    process: subprocess.Popen
    port: int

    @property
    def api_url(self) -> str:
        """What PREFECT_API_URL says while the flows use it."""
        return f"http://127.0.0.1:{self.port}/api"


def start_temporary_server() -> TemporaryServer:
    """A child serving Prefect's API on a free loopback port, killed by the kernel with this process.

    Raises:
        RuntimeError: No attempt answered within STARTUP_SECONDS.
    """
    for _ in range(ATTEMPTS):
        port = free_port()
        process = subprocess.Popen([sys.executable, "-m", "flows.temporary_server", str(port), str(os.getpid())])
        deadline = time.monotonic() + STARTUP_SECONDS
        try:
            while process.poll() is None and time.monotonic() < deadline:
                if healthy(f"http://127.0.0.1:{port}"):
                    return TemporaryServer(process, port)
                time.sleep(0.2)
        except BaseException:  # interrupted while waiting: no server is left behind
            stop(process)
            raise
        stop(process)
    raise RuntimeError(f"no temporary Prefect server answered in {ATTEMPTS} attempts")


def stop(process: subprocess.Popen) -> None:
    """Terminate a server and reap it (SIGKILL when it does not stop within 10 s)."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def serve(port: int, parent: int) -> None:
    """Serve Prefect's API on 127.0.0.1:`port` until stopped or `parent` exits (the kernel kills it then)."""
    debris.die_with_parent(signal.SIGKILL, parent)  # a parent gone already: killed here at once
    import uvicorn
    from prefect.server.api.server import create_app

    uvicorn.run(create_app(ephemeral=True, final=True), host="127.0.0.1", port=port, log_level="error")


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]))
