"""The flows' Prefect API is best effort (flows/prefect_api.py): a failing API costs the UI, not the run.

Real processes: `python -m flows.evaluate` on the hand-made mini benchmark (scibench_testing/crash.py)
against Prefect's API answering 500 to chosen requests (tests/data/prefect/failing_api.py), or
against no server at all; `python -m flows.generate` on the tiny project (`slow`). A killed server
is tests/test_crash_safety.py's.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from scibench_testing.crash import evaluate_command, expected_keys, journal_state, mini_benchmark
from scibench_testing.prefect_server import free_port, start_failing_api
from scibench_testing.project import ROOT, offline_env, tiny_project

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None,
                                 reason="bubblewrap (bwrap) is not installed: the sandbox needs it")
ARTIFACTS = "POST ^/api/artifacts/$"
FINAL_STATES = r'POST ^/api/flow_runs/[^/]+/set_state$ "type":\s*"COMPLETED"'
DONE = "The run's own work is done and its outputs are written."


def evaluate_mini(tmp_path: Path, api_url: str | None) -> tuple[subprocess.CompletedProcess, Path, set[str]]:
    """`python -m flows.evaluate steady` on a 2 x 2-query mini benchmark; the run, its journal, the keys."""
    project = mini_benchmark(tmp_path / "project", tasks=2, queries_per_task=2, sleep_s=0.2)
    env = offline_env(tmp_path) | {"PYTHONPATH": str(ROOT)}
    env.pop("PREFECT_API_URL", None)
    if api_url:
        env["PREFECT_API_URL"] = api_url
    done = subprocess.run(evaluate_command("steady", "test"), cwd=project, env=env, capture_output=True, text=True,
                          timeout=300)
    return done, project / "processed/runs/steady/journal.jsonl", expected_keys(project, "steady", "test")


def flow_run_states(api_url: str) -> dict[str, str]:
    """Flow run name -> state type, as the server recorded them."""
    request = urllib.request.Request(f"{api_url}/flow_runs/filter", data=b"{}",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return {run["name"]: run["state_type"] for run in json.load(response)}


def evaluate_refused(tmp_path, refused: list):
    """Evaluate the mini benchmark against an API that answers 500 to `refused`; the run must complete."""
    server = start_failing_api(offline_env(tmp_path), tmp_path, refused)
    try:
        done, journal, keys = evaluate_mini(tmp_path, server.api_url)
        states = flow_run_states(server.api_url)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "evaluate@steady on test: 4 queries, ran 4, 0 already in the journal"
    assert set(journal_state(journal).keys) == keys
    return done, states, server


@needs_bwrap
def test_an_artifact_the_api_refuses_costs_the_run_only_that_artifact(tmp_path):
    done, states, server = evaluate_refused(tmp_path, [ARTIFACTS])
    warning = done.stderr.strip().splitlines()[-1]
    assert warning.startswith(f"WARNING: the Prefect API at {server.api_url} failed (PrefectHTTPStatusError: "
                              "Server error '500 Internal Server Error'")
    assert warning.endswith(f"Not recorded in the Prefect UI: the artifact 'evaluate-steady-test'. {DONE}")
    assert "500 POST /api/artifacts/" in server.log.read_text()
    assert states == {"evaluate steady on test": "COMPLETED"}


@needs_bwrap
def test_a_final_state_the_api_refuses_keeps_the_flows_result(tmp_path):
    done, states, _ = evaluate_refused(tmp_path, [FINAL_STATES])
    assert done.stderr.strip().splitlines()[-1].endswith(
        f"Not recorded in the Prefect UI: the final state of the 'evaluate' flow run. {DONE}")
    assert "Traceback" not in done.stderr
    assert states == {"evaluate steady on test": "RUNNING"}


@needs_bwrap
def test_an_api_that_is_down_from_the_start_leaves_the_run_to_a_temporary_server(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}/api"
    done, journal, keys = evaluate_mini(tmp_path, dead)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "evaluate@steady on test: 4 queries, ran 4, 0 already in the journal"
    assert set(journal_state(journal).keys) == keys
    assert "flow runs report to a temporary Prefect server at http://127.0.0.1:" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"WARNING: the Prefect API at {dead} failed (ConnectError: [Errno 111] Connection refused). Not recorded"
        f" in the Prefect UI: the 'evaluate' flow run (it ran on a temporary server instead); logs sent while it"
        f" did not answer. {DONE}")


@pytest.mark.slow
@needs_bwrap
def test_generate_finishes_its_three_flows_when_their_final_states_are_refused(tmp_path):
    project = tiny_project(tmp_path / "project")
    server = start_failing_api(offline_env(tmp_path), tmp_path, [FINAL_STATES])
    env = offline_env(tmp_path) | {"PYTHONPATH": str(ROOT), "PREFECT_API_URL": server.api_url}
    try:
        done = subprocess.run([sys.executable, "-m", "flows.generate"], cwd=project, env=env, capture_output=True,
                              text=True, timeout=1800)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line.split(":")[0] for line in done.stdout.splitlines()[-3:]] == [
        "generate@sda", "generate@sda_real", "generate@auto"]
    assert (project / "processed/generated/sda/summary.json").is_file()
    assert (project / "processed/generated/auto/report.json").is_file()
    assert done.stderr.strip().splitlines()[-1].endswith(
        "Not recorded in the Prefect UI: the final state of the 'generate' flow run; the final state of the"
        f" 'autoscibench' flow run. {DONE}")


# --- every entry point goes through flows/prefect_api.py ----------------------------------------


def flow_modules() -> list[Path]:
    """The modules under flows/ that define Prefect flows (their entry points run them)."""
    return [path for path in sorted((ROOT / "flows").glob("*.py")) if "@flow(" in path.read_text()]


def direct_prefect_calls(tree: ast.Module, flows: set[str]) -> list[str]:
    """Flows called directly (`f(...)`, `f.with_options(...)(...)`) and artifacts created directly."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = node.func.func.value if (isinstance(node.func, ast.Call) and isinstance(node.func.func, ast.Attribute)
                                          ) else node.func
        name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", "")
        if name in flows or (name.startswith("create_") and name.endswith("_artifact")):
            found.append(f"line {node.lineno}: {name}")
    return found


@pytest.mark.parametrize("module", flow_modules(), ids=lambda path: path.name)
def test_every_flow_runs_and_publishes_through_prefect_api(module):
    tree = ast.parse(module.read_text())
    flows = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
             and any(isinstance(d, ast.Call) and getattr(d.func, "id", "") == "flow" for d in node.decorator_list)}
    main = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "main")
    assert flows and direct_prefect_calls(tree, flows) == []
    assert any(isinstance(node, ast.With) and ast.unparse(node.items[0].context_expr) == "prefect_api()"
               for node in ast.walk(main))
