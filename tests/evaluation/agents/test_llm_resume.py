"""A killed evaluation of an `llm` agent resumes without losing or duplicating a journal key (SPEC §6).

`python -m flows.evaluate <agent>` runs a hand-made six-query benchmark twice (`evaluate.epochs: 2`)
against the scripted server; it is SIGKILLed once its first record is journaled (with queries,
their sandboxes and their proxies in flight), then rerun to completion. Each epoch's calls carry
their own seed, and the model's answer says which seed it was given. It starts a Prefect server and two evaluation
processes: 40-90 s on two shared cores.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest
import yaml
from scibench_testing.crash import evaluate_command, expected_keys, journal_state, rerun
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, llm_options, tiny_benchmark
from scibench_testing.prefect_server import start_prefect_server
from scibench_testing.processes import descendants, survivors
from scibench_testing.project import ROOT, offline_env
from scibench_testing.scripted_llm import Request, ScriptedLLM, Turn

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
AGENT = "react_scripted"
QUERIES = 6
EPOCHS = 2


def answer_its_query(request: Request) -> Turn:
    """First turn of a query: code handing in 10 x its number + the call's seed; once that ran: submit."""
    messages = request.body["messages"]
    if messages[-1]["role"] == "tool":
        return Turn(tool_calls=[("submit", "{}")])
    number = 10 * int(re.search(r"QUERY (\d+)", request.text()).group(1)) + request.body["seed"]
    code = f"import json, time\ntime.sleep(0.5)\njson.dump({{'answer': {number}}}, open('work/answer.json', 'w'))\n"
    return Turn(tool_calls=[("python", json.dumps({"code": code}))], delay=0.3)


def test_a_killed_llm_evaluation_resumes_without_lost_or_duplicated_keys(tmp_path):
    project = tmp_path / "project"
    tiny_benchmark(project / "processed", queries=QUERIES)
    home = tmp_path / "home"
    home.mkdir()
    env = offline_env(home) | {"PYTHONPATH": str(ROOT), KEY_ENV: API_KEY}
    server = start_prefect_server(env, tmp_path)
    env["PREFECT_API_URL"] = server.api_url
    journal = project / "processed/runs" / AGENT / "journal.jsonl"
    try:
        with ScriptedLLM(answer_its_query) as llm:
            params = yaml.safe_load((ROOT / "params.yaml").read_text())
            params["agents"][AGENT] = {"kind": "llm", "options": llm_options(llm.base_url)}
            params["evaluate"] |= {"concurrency": 2, "epochs": EPOCHS}
            (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
            keys = expected_keys(project, AGENT, "test")
            with open(tmp_path / "killed.log", "wb") as log:
                run = subprocess.Popen(evaluate_command(AGENT, "test"), cwd=project, env=env, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
            deadline = time.monotonic() + 180
            while journal_state(journal).lines == 0 and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            family = descendants(run.pid)
            assert run.poll() is None, (tmp_path / "killed.log").read_text()[-3000:]
            os.kill(run.pid, signal.SIGKILL)
            run.wait()
            orphans = survivors(family)
            killed = journal_state(journal)
            rerun(project, env, AGENT, "test", tmp_path)
    finally:
        server.stop()
    state = journal_state(journal)
    assert len(keys) == QUERIES * EPOCHS
    assert 1 <= killed.lines < QUERIES * EPOCHS and killed.unreadable == [] and killed.duplicated() == 0
    assert [cmd for cmd in orphans if "llm" in cmd or "bwrap" in cmd] == []
    assert (state.lost(keys), state.duplicated(), state.unreadable, state.partial_tail) == (0, 0, [], 0)
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    answers = sorted((record["epoch"], json.loads(record["answer_text"])["answer"]) for record in records)
    assert answers == [(epoch, 10 * n + epoch) for epoch in range(EPOCHS) for n in range(QUERIES)]
