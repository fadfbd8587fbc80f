"""Inspect eval logs (stages/report/inspect_logs.py): a react run's transcript as a sample Inspect reads back.

The log is written and read with inspect_ai's own functions; the sample holds the conversation the
model had, the tool calls and their results, scibench's score, and never the gold.
"""

from __future__ import annotations

import shutil
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
