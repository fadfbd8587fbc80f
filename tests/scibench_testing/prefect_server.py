"""A local Prefect server for tests, started so that no other process can take its port.

It lives in benchmarks/runs.py (the evaluation bench starts one too), the port helpers in
stages/ports.py; a server that does not come up raises RuntimeError with its log, which fails the
test. `start_failing_api` serves Prefect's API answering 500 to chosen requests
(tests/data/prefect/failing_api.py).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from scibench_testing.project import offline_env

from benchmarks.runs import PrefectServer, start_prefect_server
from stages.ports import free_port, healthy, listening_pids

__all__ = ["PrefectServer", "free_port", "healthy", "listening_pids", "own_prefect_server", "start_failing_api",
           "start_prefect_server"]
FAILING_API = Path(__file__).resolve().parents[1] / "data/prefect/failing_api.py"


@contextlib.contextmanager
def own_prefect_server(tmp_path: Path) -> Iterator[PrefectServer]:
    """A server of the test's own, its home under `tmp_path / "prefect"`, stopped on exit."""
    home = tmp_path / "prefect"
    home.mkdir()
    server = start_prefect_server(offline_env(home), home)
    try:
        yield server
    finally:
        server.stop()


def start_failing_api(env: dict[str, str], log_dir: Path, rules: list[str], attempts: int = 3) -> PrefectServer:
    """Prefect's API on a free port, answering 500 to the requests `rules` match (see FAILING_API).

    Its log (`failing-api-<port>.log`) has one line `500 METHOD PATH` per failed request.
    """
    server_env = {key: value for key, value in env.items() if key != "PREFECT_API_URL"}
    for _ in range(attempts):
        port = free_port()
        log = log_dir / f"failing-api-{port}.log"
        with open(log, "wb") as handle:
            process = subprocess.Popen([sys.executable, str(FAILING_API), str(port), *rules], env=server_env,
                                       stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
        server = PrefectServer(process, port, log)
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if healthy(server.url) and process.pid in listening_pids(port):
                return server
            time.sleep(0.5)
        server.stop(signal.SIGKILL)
    raise RuntimeError(f"the failing Prefect API did not start in {attempts} attempts:\n{log.read_text()[-3000:]}")
