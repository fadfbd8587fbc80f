"""A react run as the transcript views read it, and the browser side of checking them.

`react_runs` runs the tiny query (scibench_testing/llm_tasks.py) against a scripted model and joins
its record, transcript and score the way the `inspect` stage loads an agent (`AgentRuns`), with
the score row made by the score stage's own `query_frame` (epoch 0). `inspect_view` serves a folder of
Inspect logs with `inspect view`; `chromium` opens headless Debian Chromium.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scibench_testing.llm_tasks import llm_options, run_llm_query, tiny_benchmark
from scibench_testing.scripted_llm import ScriptedLLM, Turn

from stages.evaluation.transcript import Transcript
from stages.ports import free_port
from stages.report.agent_runs import AgentRuns
from stages.scoring.aggregate.suite import query_frame

QUERY = "q000"


def react_runs(tmp_path: Path, script: list[Turn], agent: str = "react") -> AgentRuns:
    """One react run of the tiny query against `script`, as the `inspect` stage loads an agent's runs."""
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    _, rows = tiny_benchmark(tmp_path / "again")
    transcript = Transcript.model_validate_json((tmp_path / "artifacts" / ran.record.transcript_sha256).read_bytes())
    scores = query_frame({"mean-x": [(QUERY, ran.score)]}, {QUERY: ran.record}).assign(epoch=0)
    return AgentRuns(agent, "scripted-model", {QUERY: rows[0]["prompt"]}, scores, {QUERY: ran.record},
                     {QUERY: transcript})


@contextmanager
def inspect_view(log_dir: Path) -> Iterator[tuple[str, list[str]]]:
    """`inspect view` on `log_dir`: (its base URL, the log files it lists), ended on exit."""
    port = free_port()
    viewer = subprocess.Popen([str(Path(sys.executable).parent / "inspect"), "view", "--log-dir", str(log_dir),
                               "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        yield url, wait_for_logs(f"{url}/api/logs")
    finally:
        viewer.terminate()
        viewer.wait(timeout=30)


def wait_for_logs(url: str) -> list[str]:
    """The viewer's list of log files, once it answers (within 60 s)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return [entry["name"] for entry in json.load(response)["files"]]
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextmanager
def chromium(playwright):
    """Headless Debian Chromium (`shutil.which("chromium")`), closed on exit."""
    browser = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                         args=["--no-sandbox", "--disable-gpu"])
    try:
        yield browser
    finally:
        browser.close()
