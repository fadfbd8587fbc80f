"""Crash safety of evaluation runs under injected faults: kill -9, a lost Prefect server, a full disk.

Whatever happens to `python -m flows.evaluate`, the journal must stay readable, and a rerun must
complete with no record lost and none duplicated (SPEC §6). The short tests run in the default
suite on a hand-made benchmark (scibench_testing/crash.py `mini_benchmark`) and the `steady`
agent. The `slow` ones (`pytest -m slow tests/test_crash_safety.py`) do the same on the built tiny
benchmark with the oracle agent, at 24 seeded random kill points; with SCIBENCH_CRASH_METRICS=1
they write their figures to processed/metrics/crash_safety.json. A lost Prefect server costs a run
nothing but its record in the UI (exit 0, a complete journal, one warning naming what the UI lacks);
a run without PREFECT_API_URL killed by SIGKILL leaves no temporary Prefect server behind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from scibench_testing.crash import (
    append_fault_command,
    evaluate_command,
    expected_keys,
    journal_state,
    kill_at,
    kill_campaign,
    mini_benchmark,
    rerun,
    set_evaluate,
)
from scibench_testing.prefect_server import listening_pids, start_prefect_server
from scibench_testing.processes import descendants, survivors
from scibench_testing.project import ROOT, offline_env, run, tiny_project

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) is not installed: the sandbox needs it")
SEED = 20240607
TEMPORARY_SERVER = r"flow runs report to a temporary Prefect server at http://127\.0\.0\.1:(\d+)/api"
METRICS = ROOT / "processed/metrics/crash_safety.json"


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory):
    """One Prefect server for the module's runs (the server-kill tests start their own)."""
    home = tmp_path_factory.mktemp("prefect")
    server = start_prefect_server(offline_env(home), home)
    yield server.api_url
    server.stop()


@pytest.fixture
def mini(tmp_path, prefect_api):
    """A hand-made 2 x 3-query benchmark, its environment and the keys a complete run writes."""
    project = mini_benchmark(tmp_path / "project", tasks=2, queries_per_task=3, sleep_s=0.5)
    env = offline_env(tmp_path) | {"PYTHONPATH": str(ROOT), "PREFECT_API_URL": prefect_api}
    return {"project": project, "env": env, "logs": tmp_path,
            "keys": expected_keys(project, "steady", "test"),
            "journal": project / "processed/runs/steady/journal.jsonl"}


def assert_complete(journal: Path, keys: set[str]) -> None:
    state = journal_state(journal)
    assert (state.lost(keys), state.duplicated(), state.unreadable, state.partial_tail) == (0, 0, [], 0)


def test_kills_at_random_points_lose_and_duplicate_nothing(mini):
    figures = kill_campaign(mini["project"], mini["env"], "steady", "test", mini["keys"], points=2, seed=SEED,
                            horizon=8.0, log_dir=mini["logs"])
    assert (figures["lost"], figures["duplicated"], figures["unreadable_lines"]) == (0, 0, 0)


@pytest.mark.parametrize(("append", "cut"), [(1, 100), (2, -1)])  # cut short after 100 bytes; before fsync
def test_a_kill_inside_a_journal_append_loses_and_duplicates_nothing(mini, append, cut):
    project, env, journal = mini["project"], mini["env"], mini["journal"]
    fault = kill_at(append_fault_command("steady", "test", append, cut), project, env, 120, journal,
                    mini["logs"] / "fault.log")
    assert (fault.exit_code, fault.orphans, fault.records_after) == (-signal.SIGKILL, [], append - (cut >= 0))
    state = journal_state(journal)
    assert (state.unreadable, state.duplicated(), state.partial_tail) == ([], 0, max(cut, 0))
    summary = rerun(project, env, "steady", "test", mini["logs"])
    assert f", {append - (cut >= 0)} already in the journal" in summary
    assert_complete(journal, mini["keys"])


def test_a_killed_evaluation_leaves_no_agent_running(tmp_path, prefect_api):
    project = mini_benchmark(tmp_path / "project", tasks=1, queries_per_task=2, sleep_s=3600)
    env = offline_env(tmp_path) | {"PYTHONPATH": str(ROOT), "PREFECT_API_URL": prefect_api}
    with open(tmp_path / "evaluate.log", "wb") as log:
        evaluation = subprocess.Popen(evaluate_command("steady", "test"), cwd=project, env=env, stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while len(agents := steady_agents((family := descendants(evaluation.pid)).values())) < 2:
        if evaluation.poll() is not None or time.monotonic() > deadline:
            os.killpg(evaluation.pid, signal.SIGKILL)
            pytest.fail(f"the two agents never ran together: {agents}")
        time.sleep(0.1)
    os.kill(evaluation.pid, signal.SIGKILL)
    evaluation.wait()
    assert steady_agents((None, cmdline) for cmdline in survivors(family)) == []


def steady_agents(processes) -> list[str]:
    """The command lines of `steady` agents among (start time, command line) pairs."""
    return [cmdline for _, cmdline in processes if cmdline.startswith("python /agent/steady.py")]


def test_a_killed_prefect_server_costs_the_run_nothing_but_its_ui_record(tmp_path):
    project = mini_benchmark(tmp_path / "project", tasks=2, queries_per_task=3, sleep_s=1.0)
    env = offline_env(tmp_path) | {"PYTHONPATH": str(ROOT)}
    figures = server_kill(project, env, "steady", "test", tmp_path, exit_within_s=90, resume=False)
    assert figures["exit_code"] == 0
    assert figures["records_before_rerun"] == 6 and figures["records_at_server_kill"] < 6
    assert (figures["lost"], figures["duplicated"], figures["unreadable_lines"]) == (0, 0, 0)
    assert figures["warning"].startswith(f"WARNING: the Prefect API at {figures['api_url']} failed (ConnectError: ")
    assert set(figures["warning"].split(" UI: ")[1].split(". The run's")[0].split("; ")) == {
        "the artifact 'evaluate-steady-test'", "the final state of the 'evaluate' flow run",
        "logs sent while it did not answer", "task run states sent while it did not answer"}
    assert figures["warning"].endswith("The run's own work is done and its outputs are written.")


def test_kill_9_without_a_prefect_server_leaves_no_process_behind_on_the_mini_benchmark(tmp_path):
    project = mini_benchmark(tmp_path / "project", tasks=1, queries_per_task=2, sleep_s=3600)
    env = {k: v for k, v in offline_env(tmp_path).items() if k != "PREFECT_API_URL"} | {"PYTHONPATH": str(ROOT)}
    figures = kill_with_a_temporary_server(project, env, "steady", tmp_path / "temporary-server.log")
    assert figures == {"server_was_a_child": True, "orphaned_processes": [], "port_still_listening": False}


def kill_with_a_temporary_server(project: Path, env: dict[str, str], agent: str, log: Path) -> dict:
    """SIGKILL a run without PREFECT_API_URL once its flow runs on its temporary server; what is left."""
    with open(log, "wb") as handle:
        evaluation = subprocess.Popen(evaluate_command(agent, "test"), cwd=project, env=env, stdout=handle,
                                      stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 300
    while not (started := re.search(TEMPORARY_SERVER + r".*Beginning flow run", log.read_text(), re.DOTALL)):
        if evaluation.poll() is not None or time.monotonic() > deadline:
            os.killpg(evaluation.pid, signal.SIGKILL)
            pytest.fail(f"the evaluation ended or never ran on a temporary Prefect server:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    port = int(started.group(1))
    family = descendants(evaluation.pid)
    server_was_a_child = bool(listening_pids(port)) and listening_pids(port) <= set(family)
    os.kill(evaluation.pid, signal.SIGKILL)
    evaluation.wait()
    orphans = survivors(family)
    return {"server_was_a_child": server_was_a_child, "orphaned_processes": orphans,
            "port_still_listening": bool(listening_pids(port))}


@pytest.mark.parametrize("full", ["tmpfs", "rlimit_fsize"])
def test_a_full_disk_leaves_the_journal_readable_and_a_rerun_completes(mini, full):
    # One query at a time: the room left is one query's files, and two queries finishing together
    # could both store theirs before either is journaled.
    set_evaluate(mini["project"], {"concurrency": 1})
    figures = full_disk(mini["project"], mini["env"], "steady", "test", mini["keys"], mini["logs"], full)
    assert figures["records_at_full_disk"] >= 1 and figures["exit_code"] != 0


def server_kill(project: Path, env: dict[str, str], agent: str, split: str, log_dir: Path,
                exit_within_s: float, resume: bool = True) -> dict:
    """Kill -9 the Prefect server once a record is journaled; (`resume`) restart it on its database, rerun."""
    journal = project / "processed/runs" / agent / "journal.jsonl"
    server = start_prefect_server(env, log_dir)
    try:
        api = env | {"PREFECT_API_URL": server.api_url}
        keys = expected_keys(project, agent, split)
        with open(log_dir / "server-kill.log", "wb") as log:
            evaluation = subprocess.Popen(evaluate_command(agent, split), cwd=project, env=api, stdout=log,
                                          stderr=subprocess.STDOUT, start_new_session=True)
        while journal_state(journal).lines == 0 and evaluation.poll() is None:
            time.sleep(0.05)
        records_at_kill = journal_state(journal).lines
        server.stop(signal.SIGKILL)
        killed_at = time.monotonic()
        try:
            exit_code = evaluation.wait(timeout=exit_within_s)
        except subprocess.TimeoutExpired:
            os.killpg(evaluation.pid, signal.SIGKILL)
            pytest.fail(f"the evaluation hung for {exit_within_s} s after its Prefect server died")
        exit_seconds = time.monotonic() - killed_at
        after_kill = journal_state(journal)
        assert after_kill.unreadable == [] and after_kill.duplicated() == 0 and after_kill.partial_tail == 0
        output = (log_dir / "server-kill.log").read_text().splitlines()
        summary = ""
        if resume:
            server = start_prefect_server(env, log_dir, port=server.port)
            summary = rerun(project, env | {"PREFECT_API_URL": server.api_url}, agent, split, log_dir)
    finally:
        server.stop()
    state = journal_state(journal)
    return {"records_at_server_kill": records_at_kill, "exit_code": exit_code,
            "exit_seconds_after_server_kill": round(exit_seconds, 1),
            "records_before_rerun": after_kill.lines, "rerun": (summary.strip().splitlines() or [None])[-1],
            "lost": state.lost(keys), "duplicated": state.duplicated(),
            "unreadable_lines": len(state.unreadable) + (state.partial_tail > 0), "api_url": server.api_url,
            "warning": next((line for line in output if line.startswith("WARNING: the Prefect API")), None)}


def full_disk(project: Path, env: dict[str, str], agent: str, split: str, keys: set[str], log_dir: Path,
              full: str) -> dict:
    """Run with room for one query's files, check the journal, free the space, rerun."""
    runs = project / "processed/runs" / agent
    journal = runs / "journal.jsonl"
    # A query of `steady` leaves a transcript and a record of ~4.1 kB each (most of it its 4,000-character
    # stdout tail), two tmpfs pages each: room for one query's, not two (as a file size limit: one
    # transcript and one record, not two records).
    room = 16384 if full == "tmpfs" else 8192
    command = evaluate_command(agent, split)
    if full == "rlimit_fsize":
        command = [shutil.which("prlimit") or "prlimit", f"--fsize={room}:unlimited", "--", *command]
    elif os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (the rlimit_fsize case covers a full disk without it)")
    try:
        if full == "tmpfs":
            mount_small_tmpfs(runs, room)
        done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=600)
        state = journal_state(journal)
        assert (state.unreadable, state.partial_tail, state.duplicated()) == ([], 0, 0), done.stderr[-3000:]
        output = done.stdout + done.stderr  # the journal's append, or an artifact's or transcript's store, fails
        assert "append failed, rolled back" in output or "storing failed, nothing kept" in output
        assert not list(runs.rglob("*.partial"))
        (runs / "filler").unlink(missing_ok=True)
        rerun(project, env, agent, split, log_dir)
        assert_complete(journal, keys)
    finally:
        if full == "tmpfs" and runs.is_mount():
            kept = journal.read_bytes() if journal.exists() else b""
            subprocess.run(["umount", str(runs)], check=True)
            journal.write_bytes(kept)
    return {"mechanism": full, "records_at_full_disk": state.lines, "exit_code": done.returncode}


def mount_small_tmpfs(folder: Path, room: int) -> None:
    """Mount a 1 MiB tmpfs on `folder` and fill it up to `room` free bytes (needs root)."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], check=True)
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass
    os.truncate(filler, max(0, filler.stat().st_size - room))


# --- slow: the built tiny benchmark, the oracle agent -------------------------------------------


@pytest.fixture(scope="module")
def figures(request):
    """Figures the slow tests measure; written to processed/metrics when SCIBENCH_CRASH_METRICS=1.

    Only a session without failures writes them, so the file never mixes in a broken run.
    """
    measured: dict = {"seed": SEED}
    yield measured
    if os.environ.get("SCIBENCH_CRASH_METRICS") == "1" and len(measured) > 1 and not request.session.testsfailed:
        METRICS.parent.mkdir(parents=True, exist_ok=True)
        METRICS.write_text(json.dumps(measured, indent=2, sort_keys=True) + "\n")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, prefect_api):
    """The tiny benchmark built by `dvc repro construct` in a copy of the project.

    The oracle runs its script (`reuse_verify: false`): graded on the kept verify runs it would run
    nothing in a sandbox, and the kill points must fall into sandboxed runs.
    """
    home = tmp_path_factory.mktemp("tiny")
    project = tiny_project(home / "project", agents={"oracle": {"options": {"reuse_verify": False}}})
    env = offline_env(home) | {"PREFECT_API_URL": prefect_api}
    run(["dvc", "repro", "construct"], project, env)
    return {"project": project, "env": env, "logs": home}


@pytest.mark.slow
def test_kill_9_at_24_random_points_of_an_oracle_run(tiny, figures):
    project, env = tiny["project"], tiny["env"]
    keys = expected_keys(project, "oracle", "test")
    started = time.monotonic()
    rerun(project, env, "oracle", "test", tiny["logs"])  # a clean run sets the kill window
    horizon = time.monotonic() - started
    (project / "processed/runs/oracle/journal.jsonl").rename(project / "processed/runs/oracle/clean.jsonl")
    campaign = kill_campaign(project, env, "oracle", "test", keys, points=24, seed=SEED, horizon=horizon,
                             log_dir=tiny["logs"])
    faults = []
    for append, cut in ((1, 0), (1, 37), (3, 400), (2, -1)):
        fault = kill_at(append_fault_command("oracle", "test", append, cut), project, env, 600,
                        project / "processed/runs/oracle/journal.jsonl", tiny["logs"] / "fault.log")
        faults.append({"append": append, "cut_bytes": cut, "partial_tail": fault.partial_tail,
                       "exit_code": fault.exit_code})
        assert (fault.exit_code, fault.partial_tail) == (-signal.SIGKILL, max(cut, 0))
    rerun(project, env, "oracle", "test", tiny["logs"])
    assert_complete(project / "processed/runs/oracle/journal.jsonl", keys)
    figures["kill_9"] = {"agent": "oracle", "split": "test", "queries": len(keys),
                         "clean_run_seconds": round(horizon, 1), **campaign, "append_faults": faults}
    assert campaign["kill_points"] >= 20
    assert (campaign["lost"], campaign["duplicated"], campaign["unreadable_lines"]) == (0, 0, 0)


@pytest.mark.slow
def test_a_prefect_server_killed_mid_oracle_run(tiny, figures):
    project = tiny["project"]
    runs = project / "processed/runs/oracle"
    if (runs / "journal.jsonl").exists():
        (runs / "journal.jsonl").rename(runs / "before-server-kill.jsonl")
    env = {k: v for k, v in tiny["env"].items() if k != "PREFECT_API_URL"}
    queries = len(expected_keys(project, "oracle", "test"))
    measured = server_kill(project, env, "oracle", "test", tiny["logs"], exit_within_s=300)
    figures["prefect_server_kill"] = {key: value for key, value in measured.items() if key != "api_url"}
    assert (measured["exit_code"], measured["records_before_rerun"]) == (0, queries)
    assert measured["rerun"] == f"evaluate@oracle on test: {queries} queries, ran 0, {queries} already in the journal"
    assert (measured["lost"], measured["duplicated"], measured["unreadable_lines"]) == (0, 0, 0)
    assert measured["warning"].endswith("The run's own work is done and its outputs are written.")


@pytest.mark.slow
@pytest.mark.parametrize("full", ["tmpfs", "rlimit_fsize"])
def test_a_full_disk_during_an_oracle_run(tiny, figures, full):
    project, env = tiny["project"], tiny["env"]
    runs = project / "processed/runs/oracle"
    if (runs / "journal.jsonl").exists():
        (runs / "journal.jsonl").rename(runs / f"before-{full}.jsonl")
    keys = expected_keys(project, "oracle", "test")
    measured = full_disk(project, env, "oracle", "test", keys, tiny["logs"], full)
    figures.setdefault("full_disk", {})[full] = measured
    assert 1 <= measured["records_at_full_disk"] < len(keys) and measured["exit_code"] != 0


@pytest.mark.slow
def test_kill_9_without_a_prefect_server_leaves_no_process_behind(tiny, figures):
    env = {k: v for k, v in tiny["env"].items() if k != "PREFECT_API_URL"}
    measured = kill_with_a_temporary_server(tiny["project"], env, "nodata", tiny["logs"] / "temporary-server.log")
    figures["kill_9_with_a_temporary_prefect_server"] = measured
    assert measured == {"server_was_a_child": True, "orphaned_processes": [], "port_still_listening": False}
