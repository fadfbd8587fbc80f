"""Evaluation runs outside DVC, as the evaluation bench and the end-to-end tests make them.

- `write_benchmark`: a hand-made benchmark holding just what `flows.evaluate` reads
  (queries.parquet, benchmark.json, each task's private/task.yaml, each query's public/<query_id>/
  folder), so a run needs no construction.
- `start_prefect_server`: a local Prefect server (a Dask task runner needs one; with one, flows
  skip starting a temporary server of their own). Picking a free port and then starting a server
  on it races: between the probe and uvicorn's bind (seconds later, after imports and database
  migrations) another process may take the port, and a health check on it may then answer from
  that other process's server. So a server counts as up only when its health endpoint answers
  *and* the listening socket on the port belongs to our process (read from /proc); a server that
  exits (a lost bind) or never answers is retried on a fresh port.
- `run_evaluation`, `run_construction`: one `python -m flows.evaluate` or `python -m flows.construct`,
  timed by the clock and by the Prefect server (the flow run's own time, without the interpreter's
  and Prefect's start), with how busy the machine's cores were meanwhile (on a shared machine,
  other work takes cores too).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stages.layout import task_dir
from stages.ports import free_port, healthy, listening_pids

CHECKOUT = Path(__file__).resolve().parents[1]  # holds `stages`, `flows` and `benchmarks`
STARTUP_SECONDS = 120
ATTEMPTS = 3
NUMBER_TASK = """id: {task_id}
domain: {domain}
category: statistical_inference
difficulty: easy
modalities: [text]
source: {{citation: none}}
prompt: {prompt}
data: {{repository: mini, tables: {{}}}}
scopes: []
answer:
  hypothesis: {{format: number, description: {description}}}
"""


def offline_env(home: Path) -> dict[str, str]:
    """The environment of an offline run whose Prefect and DVC state lives under `home`."""
    return {**os.environ,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "PREFECT_HOME": str(home / "prefect"),
            "DVC_SITE_CACHE_DIR": str(home / "dvc-site"),
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
            "DVC_NO_ANALYTICS": "1", "PREFECT_SERVER_UI_V2_ENABLED": "false",
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120"}


def number_task(task_id: str, domain: str = "mini", prompt: str = "answer",
                description: str = "any number") -> str:
    """The task.yaml of a task whose answer is one number."""
    return NUMBER_TASK.format(task_id=task_id, domain=domain, prompt=prompt, description=description)


def write_benchmark(benchmark: Path, tasks: dict[str, str], queries: list[dict],
                    benchmark_id: str = "mini") -> list[dict]:
    """Write a hand-made benchmark; returns the query rows as written.

    Args:
        benchmark: The folder to create (`processed/benchmark` of a project).
        tasks: task id -> the text of its task.yaml.
        queries: Rows with `query_id`, `task_id`, `scope` and `prompt` (`split` defaults to test,
            `task_hash` to one per task), and the query's public files as `files` (name -> text).
        benchmark_id: What benchmark.json names it.
    """
    for task_id, spec in tasks.items():
        private = task_dir(benchmark, task_id) / "private"
        private.mkdir(parents=True)
        (private / "task.yaml").write_text(spec)
    rows = []
    for query in queries:
        public = task_dir(benchmark, query["task_id"]) / "public" / query["query_id"]
        public.mkdir(parents=True)
        for name, text in query.get("files", {}).items():
            (public / name).write_text(text)
        rows.append({"task_hash": f"h-{query['task_id']}", "split": "test",
                     **{key: value for key, value in query.items() if key != "files"}})
    pd.DataFrame(rows).to_parquet(benchmark / "queries.parquet")
    (benchmark / "benchmark.json").write_text(json.dumps({"benchmark_id": benchmark_id}))
    return rows


@dataclass
class PrefectServer:
    """A running `prefect server start` (its own session, so it is stopped as a group)."""

    process: subprocess.Popen
    port: int
    log: Path

    @property
    def url(self) -> str:
        """The server's root URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        """What PREFECT_API_URL should say."""
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


def start_prefect_server(env: dict[str, str], log_dir: Path, port: int | None = None) -> PrefectServer:
    """Start a Prefect server (UI and API) and return it once it answers on a port it holds.

    Args:
        env: The environment (PREFECT_HOME decides the database; PREFECT_API_URL is dropped).
        log_dir: Where `prefect-server-<port>.log` is written.
        port: Try this port first (a restart on the same database); fresh ports after a failure.

    Raises:
        RuntimeError: No attempt came up; the message holds the servers' logs.
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
    raise RuntimeError(f"the Prefect server did not start in {ATTEMPTS} attempts:\n" + "\n".join(failures))


@contextlib.contextmanager
def prefect_env(home: Path) -> Iterator[dict[str, str]]:
    """An offline environment under `home` whose PREFECT_API_URL is a local server, stopped on exit."""
    env = offline_env(home)
    server = start_prefect_server(env, home)
    try:
        yield env | {"PREFECT_API_URL": server.api_url}
    finally:
        server.stop()


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


@dataclass(frozen=True)
class Run:
    """One timed flow run."""

    process_s: float  # `python -m flows.<module>`, start to exit
    flow_s: float  # the flow run as the Prefect server timed it (Running to Completed)
    busy_cores: float  # cores the whole machine kept busy meanwhile, on average (ours and others')
    summary: str  # the run's last stdout line
    own_cpu_s: float = 0.0  # CPU of the flow's process itself (its threads), not of its sandboxes
    peak_rss_mb: float = 0.0  # the flow process's peak resident memory (VmHWM)


def run_evaluation(project: Path, agent: str, split: str, env: dict[str, str]) -> Run:
    """Run `agent` on `split` in `project` against the Prefect server `env` names, and time it."""
    return timed_flow(project, ["flows.evaluate", agent, "--split", split], f"evaluate {agent} on {split}", env)


def run_construction(project: Path, profile: str, env: dict[str, str]) -> Run:
    """Build `project`'s benchmark at `profile` (its params.yaml's) against the server `env` names; time it."""
    return timed_flow(project, ["flows.construct"], f"construct {profile} benchmark", env)


def timed_flow(project: Path, module: list[str], flow_run_name: str, env: dict[str, str]) -> Run:
    """Run `python -m <module...>` in `project` (this checkout's code) and time it and its flow run."""
    busy, total = _cpu_ticks()
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", *module], cwd=project, env=env | {"PYTHONPATH": str(CHECKOUT)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    own = _OwnUsage(process.pid)
    own.start()
    stdout, stderr = process.communicate()
    own.stop()
    seconds = time.monotonic() - started
    busy_after, total_after = _cpu_ticks()
    if process.returncode != 0:
        raise RuntimeError(f"{flow_run_name} failed:\n{stderr[-3000:]}")
    cores = os.cpu_count() or 1
    return Run(round(seconds, 2), round(flow_run_seconds(env["PREFECT_API_URL"], flow_run_name), 2),
               round(cores * (busy_after - busy) / max(total_after - total, 1), 2),
               stdout.strip().splitlines()[-1], round(own.cpu_s, 2), round(own.peak_rss_mb, 1))


class _OwnUsage(threading.Thread):
    """Samples a process's own CPU time and peak resident memory from /proc until it ends.

    Its own (utime + stime of its threads), not its children's: the sandboxes it starts are not counted.
    """

    def __init__(self, pid: int, every_s: float = 0.05):
        super().__init__(daemon=True)
        self.pid, self.every_s, self.cpu_s, self.peak_rss_mb = pid, every_s, 0.0, 0.0
        self._done = threading.Event()

    def run(self) -> None:
        ticks = os.sysconf("SC_CLK_TCK")
        while not self._done.is_set():
            try:
                fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
                status = Path(f"/proc/{self.pid}/status").read_text()
            except OSError:
                return
            self.cpu_s = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
            peak = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")), "0")
            self.peak_rss_mb = max(self.peak_rss_mb, int(peak) / 1024)
            self._done.wait(self.every_s)

    def stop(self) -> None:
        self._done.set()
        self.join()


def flow_run_seconds(api_url: str, name: str) -> float:
    """How long the latest flow run called `name` ran, as the Prefect server recorded it."""
    body = {"flow_runs": {"name": {"any_": [name]}}, "sort": "START_TIME_DESC", "limit": 1}
    request = urllib.request.Request(f"{api_url}/flow_runs/filter", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return float(json.load(response)[0]["total_run_time"])


def _cpu_ticks() -> tuple[int, int]:
    """The machine's busy and total CPU ticks so far (/proc/stat)."""
    user, nice, system, idle, iowait, irq, softirq, *_ = map(int, Path("/proc/stat").read_text().split()[1:9])
    busy = user + nice + system + irq + softirq
    return busy, busy + idle + iowait
