"""SIGTERM to a running evaluation: its sandboxes end, its workspaces and cgroups go, nothing is journaled.

`python -m flows.evaluate` runs the `steady` agent on a hand-made 2 x 3-query benchmark whose
programs sleep 20 s (scibench_testing/crash.py), two at a time, as Prefect task runs or on the
flow's own threads (`evaluate.query_task_runs`). Once both sandboxes run, the flow
process gets SIGTERM: it must end by that signal within seconds (Prefect marks the flow run
crashed), leave no process of its family, no folder or cgroup with its owner tag, and journal no
record for the two runs it killed (a killed run is not the agent's result; a rerun does them).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from scibench_testing.crash import evaluate_command, flow_env, journal_state, mini_benchmark
from scibench_testing.prefect_server import own_prefect_server
from scibench_testing.processes import descendants, survivors

from stages.sandbox import debris

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


@pytest.mark.parametrize("task_runs", [True, False], ids=["task-runs", "flow-threads"])
def test_sigterm_mid_run_leaves_nothing_and_journals_nothing(tmp_path: Path, task_runs: bool) -> None:
    with own_prefect_server(tmp_path) as server:
        project = mini_benchmark(tmp_path / "project", tasks=2, queries_per_task=3, sleep_s=20,
                                 evaluate={"query_task_runs": task_runs})
        with open(tmp_path / "evaluate.log", "wb") as log:
            flow = subprocess.Popen(evaluate_command("steady", "test"), cwd=project,
                                    env=flow_env(tmp_path, server.api_url), stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        family = wait_for_sandboxes(flow, count=2, deadline=time.monotonic() + 120)
        tag = debris.owner_tag(flow.pid)
        flow.send_signal(signal.SIGTERM)
        returncode = flow.wait(timeout=60)
    assert returncode == -signal.SIGTERM
    assert survivors(family) == []
    found = debris.find(owner=tag)
    assert (found.folders, found.cgroups) == ([], [])
    state = journal_state(project / "processed/runs/steady/journal.jsonl")
    assert (state.lines, state.unreadable, state.partial_tail) == (0, [], 0)


def wait_for_sandboxes(flow: subprocess.Popen, count: int, deadline: float) -> dict:
    """The flow's process family once `count` of its sandboxes (bwrap) run."""
    while time.monotonic() < deadline and flow.poll() is None:
        family = descendants(flow.pid)
        if sum(cmd.startswith("bwrap") for _, cmd in family.values()) >= count:
            return family
        time.sleep(0.2)
    flow.kill()
    raise AssertionError(f"the evaluation never ran {count} sandboxes at once (exit {flow.poll()})")
