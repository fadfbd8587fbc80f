"""`score@<agent>` on an llm agent run in two epochs: the first hands in the mean, the second a wrong
number (the scripted model answers by the seed its epoch's calls carry), so the epochs score 100 and
0 and the agent 50 with a standard error of 50; every run is a row of the per-query scores."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import yaml
from scibench_testing.limits import limits_with
from scibench_testing.llm_tasks import (
    API_KEY,
    GOLD,
    KEY_ENV,
    MEAN_CODE,
    PROMPT,
    SUBMIT,
    llm_options,
    python,
    tiny_benchmark,
)
from scibench_testing.project import ROOT
from scibench_testing.scripted_llm import Request, ScriptedLLM, Turn

from stages.evaluation.agents.identity import setup_agent
from stages.evaluation.harness import evaluate_query
from stages.evaluation.journal import Journal
from stages.layout import journal_path
from stages.params import AgentParams
from stages.scoring import score

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
SCOPE = '\n## Scope\n\n```json\n{"entity_key": "id"}\n```\n'  # what the score stage reads of a prompt
WRONG = "import json\njson.dump({'answer': 7}, open('work/answer.json', 'w'))\n"


def by_seed(request: Request) -> Turn:
    if request.body["messages"][-1]["role"] == "tool":
        return SUBMIT
    return python(MEAN_CODE if request.body["seed"] == 0 else WRONG)


def test_two_epochs_score_their_mean_with_its_standard_error(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    processed = tmp_path / "processed"
    benchmark, rows = tiny_benchmark(processed, queries=3, prompt=PROMPT + SCOPE)
    private = benchmark / "tasks/mean-x/private"  # the labels construction would have written
    private.mkdir(parents=True, exist_ok=True)
    (private / "queries.json").write_text(json.dumps({row["query_id"]: {"gold": {"answer": GOLD}, "tolerance": None}
                                                      for row in rows}))
    with ScriptedLLM(by_seed) as server:
        options = llm_options(server.base_url)
        params = yaml.safe_load((ROOT / "params.yaml").read_text())
        params["evaluate"] |= {"agents": [*params["evaluate"]["agents"], "react"], "epochs": 2}
        params["agents"]["react"] = {"kind": "llm", "options": options}
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        agent = setup_agent("react", AgentParams(kind="llm", options=options))
        journal = Journal(journal_path(processed / "runs", "react"))
        for epoch in (0, 1):
            for row in rows:
                journal.append(evaluate_query(row | {"epoch": epoch}, agent, benchmark, "tiny-llm",
                                              limits_with(wall_seconds=60), [ROOT], 0,
                                              artifacts=processed / "runs/react/artifacts"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["score", "react"])
    score.main()
    metrics = json.loads((processed / "metrics/react.json").read_text())
    assert metrics["epochs"] == {"n": 2, "scores": [100.0, 0.0], "se": 50.0, "spread": 100.0}
    assert (metrics["score"], metrics["n_queries"], metrics["n_runs"]) == (50.0, 3, 6)
    assert metrics["outcomes"]["answered"] == 6
    assert (metrics["score_ci"]["low"], metrics["score_ci"]["high"]) == (50.0, 50.0)  # each query's mean q is 0.5
    tasks = json.loads((processed / "metrics/react.tasks.json").read_text())["tasks"]
    assert tasks["mean-x"]["score"] == 50.0 and tasks["mean-x"]["epoch_scores"] == [100.0, 0.0]
    frame = pd.read_parquet(processed / "scores/react.parquet")
    assert sorted(zip(frame["epoch"], frame["query_id"], frame["q"], strict=True)) == [
        (0, row["query_id"], 1.0) for row in rows] + [(1, row["query_id"], 0.0) for row in rows]
