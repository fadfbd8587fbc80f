"""Fault injection for evaluation runs: kill -9 at chosen moments, then count what the journal kept.

A run is `python -m flows.evaluate <agent> --split <split>` in its own session. `kill_at` SIGKILLs
that one process (as the OOM killer or `kill -9 <pid>` would), then reports and kills whichever of
its descendants outlived it. `journal_state` reads a journal without repairing it and
counts, against the keys the run should produce, the records lost and the records duplicated.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import ValidationError
from scibench_testing.processes import descendants, survivors
from scibench_testing.project import ROOT, offline_env

from benchmarks.runs import number_task, write_benchmark
from stages.built_benchmark import load_split
from stages.evaluation.agents.identity import agent_epochs, setup_agent
from stages.evaluation.harness import pending_queries
from stages.evaluation.journal import JournalRecord, record_key
from stages.layout import BENCHMARK
from stages.params import load_params

APPEND_FAULT = ROOT / "tests/data/crash/append_fault.py"
STEADY_AGENT = ROOT / "tests/data/agents/steady"


def evaluate_command(agent: str, split: str) -> list[str]:
    """The evaluation entry point DVC runs, for one agent and split."""
    return [sys.executable, "-m", "flows.evaluate", agent, "--split", split]


def append_fault_command(agent: str, split: str, append: int, cut: int) -> list[str]:
    """The evaluation, killed inside its `append`-th journal append (see tests/data/crash)."""
    return [sys.executable, str(APPEND_FAULT), str(append), str(cut), agent, "--split", split]


@dataclass
class JournalState:
    """What a journal holds, read without repairing it."""

    lines: int  # complete lines (ending in a newline)
    unreadable: list[str]  # complete lines that are not a journal record
    partial_tail: int  # bytes after the last newline (a write cut short)
    keys: Counter = field(default_factory=Counter)

    def lost(self, expected: set[str]) -> int:
        return len(expected - set(self.keys))

    def duplicated(self) -> int:
        return sum(count - 1 for count in self.keys.values())


def journal_state(path: Path) -> JournalState:
    """Parse every complete line of a journal; nothing is written."""
    data = path.read_bytes() if path.exists() else b""
    *complete, tail = data.split(b"\n")
    state = JournalState(lines=len(complete), unreadable=[], partial_tail=len(tail))
    for line in complete:
        try:
            state.keys[JournalRecord.model_validate(json.loads(line)).key] += 1
        except (ValueError, ValidationError):
            state.unreadable.append(line[:200].decode(errors="replace"))
    return state


def expected_keys(project: Path, agent: str, split: str) -> set[str]:
    """The journal keys a complete run of `agent` on `split` writes, computed as the harness does."""
    with contextlib.chdir(project):  # params and benchmark paths are relative to the project
        params = load_params()
        configured = setup_agent(agent, params.agents[agent])
        rows = pending_queries(load_split(BENCHMARK, split), configured, set(),
                               agent_epochs(params.agents[agent], params.evaluate))
    return {record_key(row["task_hash"], row["query_id"], configured.agent_hash, configured.model, row["epoch"])
            for row in rows}


@dataclass
class Kill:
    """One kill point: when it came, and what the run had done and left behind."""

    delay_s: float
    killed: bool  # False: the run had already ended
    exit_code: int | None
    records_before: int
    records_after: int
    partial_tail: int
    orphans: list[str]


def kill_at(command: list[str], project: Path, env: dict[str, str], delay: float, journal: Path,
            log: Path) -> Kill:
    """Start `command` and SIGKILL that one process `delay` seconds later (unless it ended).

    Its descendants (the sandboxes run in sessions of their own, a temporary Prefect server in
    its group) are noted just before the kill; any still alive after it are `orphans`, then killed.
    """
    before = journal_state(journal).lines
    with open(log, "ab") as handle:
        process = subprocess.Popen(command, cwd=project, env=env, stdout=handle, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    deadline = time.monotonic() + delay
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    family = descendants(process.pid)
    killed = process.poll() is None
    if killed:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()
    orphans = survivors(family)
    after = journal_state(journal)
    return Kill(round(delay, 3), killed, process.returncode, before, after.lines, after.partial_tail, orphans)


def kill_campaign(project: Path, env: dict[str, str], agent: str, split: str, expected: set[str],
                  points: int, seed: int, horizon: float, log_dir: Path) -> dict:
    """SIGKILL runs at seeded random moments in [0, horizon) s until `points` kills, resuming after each.

    A run that ends before its kill or whose journal is complete is rerun to completion, checked
    and its journal set aside, so later kill points again fall into a run in progress (from its
    interpreter start through Prefect's startup to its last append). Returns the figures.
    """
    journal = project / "processed/runs" / agent / "journal.jsonl"
    rng = random.Random(seed)
    kills: list[Kill] = []
    cycles: list[dict] = []
    while sum(k.killed for k in kills) < points and len(kills) < 3 * points:
        kill = kill_at(evaluate_command(agent, split), project, env, rng.uniform(0, horizon), journal,
                       log_dir / f"kill-{agent}.log")
        kills.append(kill)
        assert kill.killed or kill.exit_code == 0, kill
        state = journal_state(journal)
        assert not state.unreadable and not state.duplicated(), (kill, state)
        if not kill.killed or not state.lost(expected):
            cycles.append(finish_cycle(project, env, agent, split, expected, log_dir, len(cycles)))
    cycles.append(finish_cycle(project, env, agent, split, expected, log_dir, len(cycles)))
    killed = [k for k in kills if k.killed]
    return {"kill_points": len(killed), "runs_ended_before_their_kill": len(kills) - len(killed),
            "kills_before_the_runs_first_record": sum(k.records_after == k.records_before for k in killed),
            "kills_leaving_a_partial_line": sum(k.partial_tail > 0 for k in killed),
            "completed_runs": len(cycles), "lost": sum(c["lost"] for c in cycles),
            "duplicated": sum(c["duplicated"] for c in cycles),
            "unreadable_lines": sum(c["unreadable_lines"] for c in cycles),
            "orphaned_processes": sum(len(k.orphans) for k in kills),
            "kills": [vars(k) for k in kills]}


def finish_cycle(project: Path, env: dict[str, str], agent: str, split: str, expected: set[str],
                 log_dir: Path, number: int) -> dict:
    """Rerun to completion, count the journal against `expected`, then set the journal aside."""
    journal = project / "processed/runs" / agent / "journal.jsonl"
    rerun(project, env, agent, split, log_dir)
    state = journal_state(journal)
    journal.rename(journal.with_name(f"journal.cycle{number}.jsonl"))
    return {"lost": state.lost(expected), "duplicated": state.duplicated(),
            "unreadable_lines": len(state.unreadable) + (state.partial_tail > 0)}


def rerun(project: Path, env: dict[str, str], agent: str, split: str, log_dir: Path,
          timeout: float = 600) -> str:
    """Run the evaluation to completion; its stdout (the summary line)."""
    done = subprocess.run(evaluate_command(agent, split), cwd=project, env=env, capture_output=True, text=True,
                          timeout=timeout)
    with open(log_dir / f"rerun-{agent}.log", "a") as handle:
        handle.write(done.stdout + done.stderr)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def mini_benchmark(project: Path, tasks: int, queries_per_task: int, sleep_s: float,
                   evaluate: dict | None = None) -> Path:
    """A hand-made benchmark of `tasks` x `queries_per_task` test queries for the `steady` agent.

    Just what `flows.evaluate` reads (see `benchmarks.runs.write_benchmark`), so a crash test
    needs no construction run. `evaluate`: settings of params.yaml's `evaluate` section to change.
    """
    queries = []
    for task in range(tasks):
        for query in range(queries_per_task):
            number = task * queries_per_task + query
            queries.append({"query_id": f"q{number:04d}", "task_id": f"mini-{task}", "scope": f"scope{query}",
                            "prompt": f"# mini-{task}\n\nQUERY {number}\nSLEEP {sleep_s}\n",
                            "files": {"README.md": f"# mini-{task}\n"}})
    write_benchmark(project / "processed/benchmark",
                    {f"mini-{task}": number_task(f"mini-{task}") for task in range(tasks)}, queries)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["agents"]["steady"] = {"kind": "command", "options": {
        "cmd": "python {agent_dir}/steady.py {workspace}", "agent_dir": str(STEADY_AGENT)}}
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return set_evaluate(project, evaluate or {})


def set_evaluate(project: Path, settings: dict) -> Path:
    """Change settings of the project's params.yaml `evaluate` section."""
    params = yaml.safe_load((project / "params.yaml").read_text())
    params["evaluate"] |= settings
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return project


def flow_env(tmp_path: Path, api_url: str) -> dict[str, str]:
    """The environment a flow of this checkout runs in against the Prefect API at `api_url`."""
    return offline_env(tmp_path) | {"PYTHONPATH": str(ROOT), "PREFECT_API_URL": api_url}
