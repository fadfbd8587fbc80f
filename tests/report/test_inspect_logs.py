"""Inspect eval logs (stages/report/inspect_logs.py): a react run's transcript as a sample Inspect reads back.

The log is written and read with inspect_ai's own functions; the sample holds the conversation the
model had, the tool calls and their results, scibench's score, and never the gold. `inspect view`
serves it, and headless Chromium opens the sample and finds what the model's code printed. The stage
loads each agent once, writes its log and its transcript pages, and skips the oracle.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from scibench_testing.llm_tasks import MEAN_CODE, SUBMIT, llm_options, python, run_llm_query, tiny_benchmark
from scibench_testing.scripted_llm import ScriptedLLM, Turn
from scibench_testing.transcripts import chromium, inspect_view, react_runs

from stages.evaluation.agents.identity import setup_agent
from stages.evaluation.journal import Journal, record_key
from stages.layout import journal_path
from stages.params import AgentParams, EvaluateParams, OptimizeParams
from stages.report import inspect_logs
from stages.report.inspect_logs import eval_log, write_log
from stages.scoring.aggregate.suite import query_frame

pytestmark = [pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"),
              pytest.mark.usefixtures("llm_key")]


def logged(tmp_path, script):
    path = write_log(eval_log(react_runs(tmp_path, script), "test"), tmp_path / "inspect", "react")
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


def test_the_stage_writes_each_agents_log_and_pages_from_one_load_and_skips_the_oracle(tmp_path, monkeypatch):
    """Two epochs of the react agent: a page per run, an Inspect sample per run with its epoch."""
    processed = tmp_path / "processed"
    with ScriptedLLM([python(MEAN_CODE), SUBMIT, python(MEAN_CODE.replace("mean", "second")), SUBMIT]) as server:
        options = llm_options(server.base_url)
        first = run_llm_query(processed / "runs" / "react", options)
        second = run_llm_query(processed / "runs" / "react-second", options)
    _, rows = tiny_benchmark(processed)
    react = AgentParams(kind="llm", options=options)
    setup = setup_agent("react", react)
    again = second.record.model_copy(update={"epoch": 1, "key": record_key(
        rows[0]["task_hash"], "q000", setup.agent_hash, setup.model, 1)})
    (processed / "runs/react/artifacts").mkdir(parents=True, exist_ok=True)
    for artifact in (processed / "runs/react-second/artifacts").iterdir():
        shutil.copy(artifact, processed / "runs/react/artifacts" / artifact.name)
    journal = Journal(journal_path(processed / "runs", "react"))
    journal.append(first.record)
    journal.append(again)
    (processed / "scores").mkdir()
    pd.concat([query_frame({"mean-x": [("q000", ran.score)]}, {"q000": record}).assign(epoch=epoch)
               for epoch, (ran, record) in enumerate([(first, first.record), (second, again)])]
              ).to_parquet(processed / "scores/react.parquet")
    (processed / "reports/transcripts").mkdir(parents=True)
    (processed / "reports/transcripts/gone.html").write_text("an agent no longer evaluated")
    (processed / "reports/inspect").mkdir()
    (processed / "reports/inspect/2000-01-01T00-00-00_scibench_gone.json").write_text("{}")
    (processed / "runs/one_turn").mkdir()
    (processed / "runs/one_turn/SKIPPED").write_text("no LLM endpoint configured\n")  # a system that did not run
    params = SimpleNamespace(evaluate=EvaluateParams(split="test", agents=["oracle", "react"], epochs=2),
                             agents={"oracle": AgentParams(kind="oracle"), "react": react},
                             optimize=OptimizeParams(runs=["one_turn"]))
    loaded, load = [], inspect_logs.load_agent_runs
    monkeypatch.setattr(inspect_logs, "load_params", lambda: params)
    monkeypatch.setattr(inspect_logs, "load_agent_runs", lambda *args: loaded.append(args[0]) or load(*args))
    monkeypatch.chdir(tmp_path)
    inspect_logs.main()
    reports = processed / "reports"
    assert loaded == ["react"]
    assert sorted(str(p.relative_to(reports)) for p in reports.rglob("*") if p.is_file()) == [
        "inspect/2000-01-01T00-00-00_scibench_react.json", "transcripts/react.html", "transcripts/react/q000-e1.html",
        "transcripts/react/q000.html"]
    assert "mean 2.5" in (reports / "transcripts/react/q000.html").read_text()
    assert "second 2.5" in (reports / "transcripts/react/q000-e1.html").read_text()
    assert "q000, epoch 1" in (reports / "transcripts/react.html").read_text()
    log = read_eval_log(str(reports / "inspect/2000-01-01T00-00-00_scibench_react.json"))
    assert [(sample.id, sample.epoch) for sample in log.samples] == [("q000", 1), ("q000", 2)]
    assert log.eval.config.epochs == 2 and "second 2.5" in log.samples[1].messages[-2].text


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed: the viewer was not opened")
def test_inspect_view_opens_the_react_runs_transcript_in_a_browser(tmp_path):
    from playwright.sync_api import sync_playwright

    path, _ = logged(tmp_path, [python(MEAN_CODE), SUBMIT])
    with inspect_view(path.parent) as (url, listed), sync_playwright() as playwright, chromium(playwright) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}/#/logs/{path.name}", wait_until="networkidle")
        page.get_by_text("q000", exact=True).first.click()
        page.get_by_text("mean 2.5").first.wait_for(timeout=30_000)
        shown = page.inner_text("body")
    assert [Path(name).name for name in listed] == [path.name]
    assert "mean 2.5" in shown and "submit" in shown
