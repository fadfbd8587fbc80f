"""`evaluate_query` for the oracle: graded on the kept verify run, or run when none was kept."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml
from scibench_testing.graded import graded_task, metric
from scibench_testing.limits import limits_with

from benchmarks.runs import write_benchmark
from stages.catalog import CheckpointSpec
from stages.evaluation import harness, verify_run
from stages.evaluation.agents.identity import setup_agent
from stages.evaluation.harness import evaluate_query
from stages.evaluation.program import Attempt
from stages.layout import task_dir, verify_run_dir
from stages.params import AgentParams
from stages.sandbox import Collected

TASK_ID = "tiny-graded"
PREDICTIONS = b"predictions of the verify run"
FEATURES = b"features of the verify run"
ATTEMPT = Attempt(answer_text='{"metrics": {"nse": 0.71}}', exit_code=0, timed_out=False, infra_error=None,
                  wall_seconds=3.5, stdout="fitted\n", stderr="", limits_hit=(),
                  files={"predictions.parquet": Collected(PREDICTIONS, None),
                         "features.parquet": Collected(FEATURES, None),
                         "bootstrap.json": Collected(b"{}", None)})  # collected at construction only


@pytest.fixture
def benchmark(tmp_path: Path) -> tuple[Path, dict]:
    """A one-query benchmark of a graded task with an artifact and a checkpoint; no verify run kept."""
    spec = graded_task([metric("nse", "nse", "qsim_mm_d")], task_id=TASK_ID).model_copy(update={"checkpoints": [
        CheckpointSpec(file="features.parquet", stage="modeling", description="per basin", key=["gauge_id"],
                       columns=["x"])]})
    folder = tmp_path / "benchmark"
    (row,) = write_benchmark(folder, {TASK_ID: yaml.safe_dump(spec.model_dump(mode="json"))},
                             [{"query_id": "q-0001", "task_id": TASK_ID, "scope": "s", "prompt": "Predict."}])
    return folder, row


def oracle(reuse_verify: bool | None):
    options = {} if reuse_verify is None else {"reuse_verify": reuse_verify}
    return setup_agent("oracle", AgentParams(kind="oracle", options=options))


def evaluate(benchmark: tuple[Path, dict], reuse_verify: bool, tmp_path: Path):
    folder, row = benchmark
    return evaluate_query(row, oracle(reuse_verify), folder, "b-1", limits_with(), [], 0,
                          artifacts=tmp_path / "artifacts")


def keep(benchmark: tuple[Path, dict]) -> None:
    folder, row = benchmark
    verify_run.write_verify_run(verify_run_dir(task_dir(folder, TASK_ID) / "private", row["query_id"]), ATTEMPT)


def sandbox_runs(monkeypatch) -> list[str]:
    """Every sandbox run `evaluate_query` starts (each hands in ATTEMPT), by the files it collects."""
    runs = []

    def run_query(prompt, public_dir, program, limits, hidden, unsafe_no_sandbox=False, collect=()):
        runs.append(collect)
        return ATTEMPT

    monkeypatch.setattr(harness, "run_query", run_query)
    return runs


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_kept_verify_run_is_graded_without_running_anything(benchmark, tmp_path: Path, monkeypatch):
    keep(benchmark)

    def run_query(*args, **kwargs):
        raise AssertionError("the oracle ran although its verify run was kept")

    monkeypatch.setattr(harness, "run_query", run_query)
    record = evaluate(benchmark, True, tmp_path)
    assert record.reused_from == "verify run at construction"
    assert (record.exit_code, record.answer_text, record.attempts, record.wall_seconds) == (
        0, '{"metrics": {"nse": 0.71}}', 1, 0.0)
    assert record.artifact_sha256 == sha256(PREDICTIONS)
    assert record.checkpoints == {"features.parquet": sha256(FEATURES)}
    assert (tmp_path / "artifacts" / sha256(PREDICTIONS)).read_bytes() == PREDICTIONS
    assert (tmp_path / "artifacts" / sha256(FEATURES)).read_bytes() == FEATURES
    assert sorted(p.name for p in (tmp_path / "artifacts").iterdir()) == sorted(
        [sha256(PREDICTIONS), sha256(FEATURES)])


def test_the_kept_run_makes_the_record_a_run_of_the_same_hand_in_makes(benchmark, tmp_path: Path, monkeypatch):
    """What is graded is the same: only the origin, the wall seconds and the agent's hash differ."""
    keep(benchmark)
    sandbox_runs(monkeypatch)
    reused, ran = evaluate(benchmark, True, tmp_path / "a"), evaluate(benchmark, False, tmp_path / "b")
    different = {"key", "agent_hash", "reused_from", "wall_seconds"}
    assert reused.model_dump(exclude=different) == ran.model_dump(exclude=different)
    assert (ran.reused_from, ran.wall_seconds, ran.execution) == (None, 3.5, None)


def test_without_a_kept_verify_run_the_oracle_runs_and_says_so(benchmark, tmp_path: Path, monkeypatch):
    runs = sandbox_runs(monkeypatch)
    record = evaluate(benchmark, True, tmp_path)
    assert runs == [("predictions.parquet", "features.parquet")]
    assert record.reused_from is None
    assert record.execution == ("ran the script: the benchmark kept no verify run of this query "
                                "(built before they were kept)")
    assert (record.artifact_sha256, record.wall_seconds, record.attempts) == (sha256(PREDICTIONS), 3.5, 1)


def test_with_reuse_off_the_oracle_runs_even_with_a_kept_run(benchmark, tmp_path: Path, monkeypatch):
    keep(benchmark)
    runs = sandbox_runs(monkeypatch)
    record = evaluate(benchmark, False, tmp_path)
    assert len(runs) == 1
    assert (record.reused_from, record.execution) == (None, None)


def test_reuse_on_and_off_are_different_agents():
    on, off, unset = oracle(True), oracle(False), oracle(None)
    assert on.agent_hash not in {off.agent_hash, unset.agent_hash}
    assert unset.agent_hash == "5547554cf30b7c37"  # as before the option: those journals still resume


def test_warm_is_how_a_built_in_agent_runs_not_which_agent_it_is():
    def agent_hash(kind: str, options: dict) -> str:
        return setup_agent(kind, AgentParams(kind=kind, options=options)).agent_hash

    for kind in ("heuristic", "nodata", "fabricate", "defensive", "prior"):
        assert agent_hash(kind, {"warm": True}) == agent_hash(kind, {"warm": False}) == agent_hash(kind, {})


def test_a_warm_program_must_be_a_script_under_agent():
    import sys

    from stages.evaluation.program import AgentProgram, warm_script

    script = AgentProgram([sys.executable, "/agent/heuristic_agent.py", "/workspace"], agent_dir=Path("a"),
                          warm=("numpy",))
    assert warm_script(script) == ("heuristic_agent.py", ["/workspace"])
    for argv in ([sys.executable, "-m", "heuristic", "/workspace"], ["/usr/bin/python3", "/agent/x.py"],
                 [sys.executable, "/work/x.py"]):
        with pytest.raises(ValueError, match="a warm program runs `python /agent/<script>`"):
            warm_script(AgentProgram(argv, agent_dir=Path("a"), warm=()))


def test_repeated_runs_are_pending_epoch_by_epoch_and_only_the_unjournaled_ones():
    import pandas as pd

    from stages.evaluation.journal import record_key

    agent = setup_agent("mine", AgentParams(kind="command", options={"cmd": "true"}))
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "task_hash": ["t", "t"], "prompt": ["p1", "p2"]})
    done = {record_key("t", "q2", agent.agent_hash, None, 0), record_key("t", "q1", agent.agent_hash, None, 1)}
    pending = harness.pending_queries(queries, agent, done, epochs=3)
    assert [(row["query_id"], row["epoch"]) for row in pending] == [("q1", 0), ("q2", 1), ("q1", 2), ("q2", 2)]
    assert [(row["query_id"], row["epoch"]) for row in harness.pending_queries(queries, agent, done)] == [("q1", 0)]


def test_a_command_agent_is_told_which_run_of_the_query_it_is(tmp_path: Path):
    from stages.evaluation.agents import command
    from stages.evaluation.program import QueryContext

    options = {"cmd": "python {agent_dir}/run.py {workspace}", "env": {"MINE": "1"}}
    for epoch in (0, 2):
        program = command.program(options, QueryContext("q1", "t", tmp_path, None, epoch))
        assert program.env == {"MINE": "1", "SCIBENCH_EPOCH": str(epoch)}


def test_many_threads_storing_the_same_bytes_at_once_all_get_them_kept(tmp_path: Path):
    """Queries in flight often hand in identical files ({"answer": 2.5}); they shared one partial file."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    data = b'{"answer": 2.5}'
    start = threading.Barrier(16)

    def store(_):
        start.wait()
        return harness.store_artifact(tmp_path / "artifacts", data)

    for _ in range(20):
        with ThreadPoolExecutor(16) as pool:
            digests = set(pool.map(store, range(16)))
        assert digests == {hashlib.sha256(data).hexdigest()}
        assert [path.name for path in (tmp_path / "artifacts").iterdir()] == [hashlib.sha256(data).hexdigest()]
        (tmp_path / "artifacts" / hashlib.sha256(data).hexdigest()).unlink()
