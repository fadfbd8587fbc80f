"""ST-Bench's protocol end to end, each stage run as DVC runs it, against a scripted model whose code
is right only after a plan: optimize@one_turn, optimize@oneshot-task and optimize@oneshot-category
learn (the designer's plan-then-program workflow beats one_turn on val), evaluate@ and score@ run
the learned systems and the baseline on test, and compare_systems sets them against the baseline:
win rate 1, gen 0 (one task: both protocols learn the same workflow), the search cost apart and the
audit clean. Run again, the search finds every candidate in its journal; killed in the middle of a
search, the run started again does not run a finished candidate again. Without a model every
stage says it skipped, and the comparison too."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading

import pytest
import yaml
from scibench_testing.crash import flow_env
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, llm_options
from scibench_testing.optimize import PLAN_THEN_PROGRAM, PREDICTING_CODE, ZEROS, graded_pools, team_model
from scibench_testing.prefect_server import own_prefect_server
from scibench_testing.project import ROOT

from stages.evaluation.agents.llm.scripted import ScriptedLLM
from stages.optimize import compare, protocol
from stages.report.systems import load_systems, systems_section
from stages.scoring import score

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
RUNS = ["one_turn", "oneshot-task", "oneshot-category"]


def project_with(tmp_path, model: dict | None):
    project = tmp_path / "project"
    graded_pools(project / "processed" / "benchmark")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["optimize"] |= {"model": model, "runs": RUNS, "budgets": {"oneshot": {"rounds": 1, "val_queries": 1}},
                           "cache_dir": str(tmp_path / "cache")}
    params["evaluate"]["limits"]["wall_seconds"] = 60
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return project


def stages(project, env, monkeypatch, capsys) -> list[str]:
    """Run the protocol's stages in DVC's order (the flows as DVC runs them, the rest in this process);
    what each printed last."""
    monkeypatch.chdir(project)
    printed = []

    def entry(main, *argv):
        monkeypatch.setattr(sys, "argv", ["stage", *argv])
        main()
        printed.append(capsys.readouterr().out.strip().splitlines()[-1])

    for run in RUNS:
        entry(protocol.main, run)
    for run in RUNS:
        done = subprocess.run([sys.executable, "-m", "flows.evaluate", run], cwd=project, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (run, done.stdout[-2000:], done.stderr[-4000:])
        printed.append(done.stdout.strip().splitlines()[-1])
        entry(score.main, run)
    entry(compare.main)
    return printed


def test_both_protocols_learn_evaluate_on_test_and_compare_with_the_baseline(tmp_path, monkeypatch, capsys):
    planned = team_model([PLAN_THEN_PROGRAM], lambda task: PREDICTING_CODE if "## Plan" in task else ZEROS)
    with ScriptedLLM(planned) as llm, own_prefect_server(tmp_path) as server:
        access = {key: value for key, value in llm_options(llm.base_url).items() if key != "strategy"}
        project = project_with(tmp_path, access)
        monkeypatch.setenv(KEY_ENV, API_KEY)
        stages(project, flow_env(tmp_path, server.api_url) | {KEY_ENV: API_KEY}, monkeypatch, capsys)
        calls = len(llm.requests)
        monkeypatch.setattr(sys, "argv", ["stage", "oneshot-task"])
        protocol.main()  # run again (as after a kill): every candidate is found in the cache's journal
        assert len(llm.requests) == calls + 1  # the designer's call; no candidate ran again
    optimized = project / "processed" / "optimize"
    task_run = json.loads((optimized / "oneshot-task" / "summary.json").read_text())
    (unit, learned), = task_run["units"].items()
    logged = [json.loads(line) for line in (optimized / "oneshot-task" / "search" / f"{unit}.jsonl").read_text()
              .splitlines()]
    assert [(step["round"], step["reused"]) for step in logged] == [(0, 1), (1, 1)]
    assert (learned["name"], learned["val_reward"], learned["audit"]["inflated_preferred"]) == (
        "plan_then_program", pytest.approx(1.0), [])
    index = json.loads((optimized / "oneshot-category" / "index.json").read_text())
    assert list(index.values()) != [f"workflows/{unit}.yaml"] and list(index) == [unit]
    compared = json.loads((project / "processed/metrics/compare_systems.json").read_text())
    assert compared["baseline"] == "one_turn" and compared["split"] == "test"
    for run in ("oneshot-task", "oneshot-category"):
        versus = compared["versus_baseline"][run]
        assert versus["win_rate"] == 1.0 and versus["delta_perf"] > 0
        assert compared["search_cost"][run]["designer_calls"] == 1
        assert compared["audit"][run]["inflated_preferred"] == []
    assert compared["generalizability"] == [{"task_trained": "oneshot-task", "category_trained": "oneshot-category",
                                             "gen": 0.0}]
    section = systems_section(load_systems(project / "processed/metrics"), tmp_path / "plots")
    assert [getattr(item, "key", None) or item.name for item in section.items] == [
        "systems-scores", "systems-gen", "systems-frontier", "systems-coverage", "systems-versus",
        "systems-generalizability", "systems-search-cost", "systems-audit"]
    assert sorted(path.name for path in (tmp_path / "plots").glob("*.png")) == [
        "systems-coverage.png", "systems-frontier.png", "systems-gen.png", "systems-scores.png"]
    audit = {row[0]: row[1:] for row in section.items[-1].rows}
    assert audit["oneshot-task"][2] == "0" and set(audit) == set(RUNS)


def test_without_a_model_every_stage_of_the_protocol_says_it_skipped(tmp_path, monkeypatch, capsys):
    printed = stages(project_with(tmp_path, None), flow_env(tmp_path, "http://127.0.0.1:9/api"), monkeypatch, capsys)
    reason = "no LLM endpoint configured (params.yaml optimize.model is null); the build stays offline"
    assert printed[:3] == [f"optimize@{run}: skipped: {reason}" for run in RUNS]
    assert printed[3:-1] == [f"{stage}@{run}: skipped: {reason}" for run in RUNS for stage in ("evaluate", "score")]
    assert printed[-1] == f"compare_systems: skipped: {reason}"
    section = systems_section(load_systems(tmp_path / "project/processed/metrics"), tmp_path / "plots")
    assert section.items == [] and section.note.startswith(f"Not run: {reason}. To run it, set params.yaml")


def test_a_search_killed_midway_resumes_without_running_a_finished_candidate_again(tmp_path, monkeypatch, capsys):
    asked, release, blocking = threading.Event(), threading.Event(), [True]
    planned = team_model([PLAN_THEN_PROGRAM], lambda task: PREDICTING_CODE if "## Plan" in task else ZEROS)

    def model(request):
        if request.body["messages"][0]["content"].startswith("You design workflows") and blocking[0]:
            asked.set()  # the baseline (and the start, the same document) ran; the run is killed here
            release.wait(60)
        return planned(request)

    monkeypatch.setenv(KEY_ENV, API_KEY)
    with ScriptedLLM(model) as llm:
        access = {key: value for key, value in llm_options(llm.base_url).items() if key != "strategy"}
        project = project_with(tmp_path, access)
        env = flow_env(tmp_path, "http://127.0.0.1:9/api") | {KEY_ENV: API_KEY}
        process = subprocess.Popen([sys.executable, "-m", "stages.optimize.protocol", "oneshot-task"],
                                   cwd=project, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            assert asked.wait(120)
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)
        finally:
            blocking[0] = False
            release.set()
        killed = [request.body["messages"][0]["content"][:30] for request in llm.requests]
        monkeypatch.chdir(project)
        monkeypatch.setattr(sys, "argv", ["stage", "oneshot-task"])
        protocol.main()
    roles = [request.body["messages"][0]["content"] for request in llm.requests[len(killed):]]
    assert len(killed) == 2 and killed[1].startswith("You design workflows")  # the baseline's run, the designer
    assert [role.startswith("You design workflows") for role in roles] == [True, False, False]  # no run repeated
    assert "You plan the analysis" in roles[1] and "one complete Python program" in roles[2]
    summary = json.loads((project / "processed/optimize/oneshot-task/summary.json").read_text())
    assert next(iter(summary["units"].values()))["name"] == "plan_then_program"
