"""Inspect eval logs (stages/report/inspect_logs.py): a react run's transcript as a sample Inspect reads back.

The log is written and read with inspect_ai's own functions; the sample holds the conversation the
model had, the tool calls and their results, scibench's score, and never the gold. `inspect view`
serves it, and headless Chromium opens the sample and finds what the model's code printed.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from scibench_testing.llm_tasks import (
    API_KEY,
    KEY_ENV,
    MEAN_CODE,
    SUBMIT,
    llm_options,
    python,
    run_llm_query,
    tiny_benchmark,
)
from scibench_testing.scripted_llm import ScriptedLLM, Turn

from stages.evaluation.transcript import Transcript
from stages.report.inspect_logs import eval_log, write_log

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)


def logged(tmp_path, script):
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    _, rows = tiny_benchmark(tmp_path / "again")
    transcript = Transcript.model_validate_json((tmp_path / "artifacts" / ran.record.transcript_sha256).read_bytes())
    scores = pd.DataFrame([{"query_id": "q000", "task_id": "mean-x", "reward": ran.score.reward,
                            "outcome": ran.score.outcome.value, "q": ran.score.pass_rate, "agent_limit": None}])
    log = eval_log("react", "test", "scripted-model", {"q000": rows[0]["prompt"]}, scores,
                   {"q000": ran.record}, {"q000": transcript})
    path = write_log(log, tmp_path / "inspect", "react")
    return path, read_eval_log(str(path))


def test_a_react_run_reads_back_as_an_inspect_sample(tmp_path):
    path, log = logged(tmp_path, [Turn(content="Looking."), python(MEAN_CODE), SUBMIT])
    assert (log.eval.model, log.eval.task, log.status, len(log.samples)) == ("scibench/scripted-model",
                                                                            "scibench/test", "success", 1)
    sample = log.samples[0]
    assert [message.role for message in sample.messages] == ["system", "user", "assistant", "user", "assistant",
                                                              "tool", "assistant"]
    call = sample.messages[4].tool_calls[0]
    assert (call.function, call.arguments) == ("python", {"code": MEAN_CODE})
    assert sample.messages[5].tool_call_id == call.id and "stdout:\nmean 2.5\n" in sample.messages[5].text
    assert sample.messages[6].tool_calls[0].function == "submit"
    score = sample.scores["scibench"]
    assert (score.value, score.answer, score.metadata["outcome"]) == (1.0, '{"answer": 2.5}', "answered")
    assert sample.target == "" and path.name == "2000-01-01T00-00-00_scibench_react.json"
    assert [Path(info.name).name for info in list_eval_logs(str(path.parent), formats=["json"])] == [path.name]


def test_the_gold_is_not_in_the_log_of_an_agent_that_missed_it(tmp_path):
    wrong = "open('work/answer.json', 'w').write('{\"answer\": 7}')"
    path, log = logged(tmp_path, [python(wrong), SUBMIT])
    assert log.samples[0].scores["scibench"].value == 0.0
    assert "2.5" not in path.read_text()


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed: the viewer was not opened")
def test_inspect_view_opens_the_react_runs_transcript_in_a_browser(tmp_path):
    from playwright.sync_api import sync_playwright

    path, _ = logged(tmp_path, [python(MEAN_CODE), SUBMIT])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    viewer = subprocess.Popen([str(Path(sys.executable).parent / "inspect"), "view", "--log-dir", str(path.parent),
                               "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        listed = wait_for_logs(f"http://127.0.0.1:{port}/api/logs")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                                 args=["--no-sandbox", "--disable-gpu"])
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(f"http://127.0.0.1:{port}/#/logs/{path.name}", wait_until="networkidle")
                page.get_by_text("q000", exact=True).first.click()
                page.get_by_text("mean 2.5").first.wait_for(timeout=30_000)
                shown = page.inner_text("body")
            finally:
                browser.close()
    finally:
        viewer.terminate()
        viewer.wait(timeout=30)
    assert [Path(name).name for name in listed] == [path.name]
    assert "mean 2.5" in shown and "submit" in shown


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
