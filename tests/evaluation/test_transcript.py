"""Transcripts (stages/evaluation/transcript.py): every step of a query on record, and nothing private in it.

A react run against a scripted model is read back from its content-addressed file: its events in
order, exactly; a run whose model never computes the answer leaves neither the gold nor any host
path in its transcript; the oracle, which sees the private files, keeps none.
"""

from __future__ import annotations

import json
import shutil

import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, MEAN_CODE, MODEL, SUBMIT, llm_options, python, run_llm_query
from scibench_testing.scripted_llm import ScriptedLLM, Turn

from stages.evaluation.transcript import Transcript

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)


def read_transcript(tmp_path, record) -> tuple[bytes, Transcript]:
    data = (tmp_path / "artifacts" / record.transcript_sha256).read_bytes()
    return data, Transcript.model_validate_json(data)


def test_a_react_run_is_on_record_call_by_call_and_cell_by_cell(tmp_path):
    with ScriptedLLM([Turn(content="Looking."), python(MEAN_CODE), SUBMIT]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    _, transcript = read_transcript(tmp_path, ran.record)
    kinds = [(event.kind, getattr(event, "role", None)) for event in transcript.events]
    assert kinds == [("model", "agent"), ("model", "agent"), ("code", None), ("model", "agent"), ("stop", None)]
    first, second, code, third, stop = transcript.events
    assert [m["role"] for m in first.sent] == ["system", "user"] and first.reply == "Looking."
    assert [m["role"] for m in second.sent] == ["assistant", "user"]  # only what the call added
    assert second.tool_calls[0]["function"] == {"name": "python", "arguments": json.dumps({"code": MEAN_CODE})}
    assert (code.code, code.stdout, code.exit_code, code.restarted) == (MEAN_CODE, "mean 2.5\n", 0, False)
    assert [m["role"] for m in third.sent] == ["assistant", "tool"] and third.sent[1]["content"].startswith(
        "exit code 0")
    assert stop.reason == "submitted"
    assert transcript.handed_in["answer.json"] is not None
    assert (tmp_path / "artifacts" / transcript.handed_in["answer.json"]).read_text() == '{"answer": 2.5}'
    assert len(ran.record.usage.calls) == 3  # usage, latency and retries: the proxy's record, call by call
    assert all(call.role == "agent" and call.model == MODEL for call in ran.record.usage.calls)


def test_a_transcript_holds_no_gold_no_key_and_no_host_path(tmp_path):
    look = ("import os\nprint(sorted(os.listdir('.')), os.getcwd())\n"
            "open('work/answer.json', 'w').write('{\"answer\": 0}')")
    with ScriptedLLM([python(look), SUBMIT]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    data, transcript = read_transcript(tmp_path, ran.record)
    text = data.decode()
    assert "['data', 'prompt.md', 'work'] /workspace" in transcript.events[1].stdout
    for secret in ("2.5", API_KEY, str(tmp_path), "/private", "/work/main", "/root"):
        assert secret not in text, secret


def test_the_oracle_keeps_no_transcript_and_a_program_keeps_its_run(tmp_path):
    ran = run_llm_query(tmp_path, {}, kind="oracle")
    assert ran.record.transcript_sha256 is None
    floor = run_llm_query(tmp_path / "floor", {}, kind="nodata")
    _, transcript = read_transcript(tmp_path / "floor", floor.record)
    assert [event.kind for event in transcript.events] == ["program"]
    run = transcript.events[0]
    assert (run.exit_code, run.stdout, run.stderr) == (floor.record.exit_code, floor.record.stdout,
                                                       floor.record.stderr)
