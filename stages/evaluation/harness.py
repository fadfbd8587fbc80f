"""Evaluation as plain functions: which queries are pending, and running one query for an agent."""

from __future__ import annotations

import hashlib
import os
import threading
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

import pandas as pd

from stages.built_benchmark import built_task
from stages.evaluation import verify_run
from stages.evaluation.agents import AGENTS, QueryContext
from stages.evaluation.agents.identity import AgentSetup
from stages.evaluation.journal import JournalRecord, record_key
from stages.evaluation.program import AgentProgram, Attempt, Binding, ServiceReport
from stages.evaluation.runner import run_query
from stages.evaluation.transcript import ProgramRun, Transcript
from stages.layout import task_dir
from stages.sandbox import Limits
from stages.sandbox.workspace import ANSWER_FILE


def store_artifact(artifacts: Path, data: bytes) -> str:
    """Keep an artifact's bytes under their sha256 (written atomically); returns the digest."""
    digest = hashlib.sha256(data).hexdigest()
    path = artifacts / digest
    if not path.exists():
        artifacts.mkdir(parents=True, exist_ok=True)
        # A partial file of this call's own: queries in flight often hand in the same bytes at once.
        partial = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.partial")
        try:
            partial.write_bytes(data)
            partial.replace(path)  # the same bytes, whoever renames last
        except OSError as error:  # a full disk: no partial file is left, and the query is not journaled
            partial.unlink(missing_ok=True)
            raise OSError(error.errno, f"{path}: storing failed, nothing kept: {error.strerror}") from error
    return digest


def _artifact(attempt: Attempt, name: str | None, artifacts: Path) -> tuple[str | None, str | None]:
    collected = attempt.files.get(name) if name else None
    if collected is None or collected.missing:
        return None, None
    if collected.data is None:
        return None, collected.problem
    return store_artifact(artifacts, collected.data), None


def evaluate_query(
    query: dict,
    agent: AgentSetup,
    benchmark: Path,
    bench_id: str,
    limits: Limits,
    hidden: list[Path],
    infra_retries: int,
    unsafe_no_sandbox: bool = False,
    *,
    artifacts: Path,
) -> JournalRecord:
    """Run the agent on one query; infrastructure failures are retried, never scored as the agent's.

    The task's artifact, when it declares one, is kept in `artifacts` under its sha256 before the
    record is returned; the record names it (or says why it was not taken). So are the checkpoints
    the agent wrote (`TaskSpec.checkpoints`), which only attribute errors and are never scored.
    A program with a kept run (the oracle's verify run at construction) is not run: the kept
    hand-in is recorded and stored the same way, and the record names its origin; without one
    kept for the query, the program runs and the record says so.
    """
    folder = task_dir(benchmark, query["task_id"])
    epoch = query.get("epoch", 0)
    context = QueryContext(query["query_id"], query["task_id"], folder / "private", agent.prices, epoch)
    program = AGENTS[agent.params.kind](agent.params.options, context)
    spec = built_task(benchmark, query["task_id"])
    artifact_name = spec.artifact.file if spec.artifact is not None else None
    checkpoint_names = tuple(c.file for c in spec.checkpoints)
    kept = verify_run.read_verify_run(program.kept_run) if program.kept_run is not None else None
    if kept is not None:
        attempt, attempts, fields = kept, 1, {"reused_from": verify_run.ORIGIN}
    else:
        attempts = 0
        while True:
            attempts += 1
            attempt, report = run_attempt(query["prompt"], folder / "public" / query["query_id"], program,
                                          limits, hidden, unsafe_no_sandbox,
                                          collect=((artifact_name,) if artifact_name else ()) + checkpoint_names)
            if attempt.infra_error is None or attempts > infra_retries:
                break
        fields = report.fields if program.kept_run is None else {**report.fields, "execution": verify_run.NOT_KEPT}
    artifact_sha256, artifact_problem = _artifact(attempt, artifact_name, artifacts)
    checkpoints = {name: sha for name in checkpoint_names
                   if (sha := _artifact(attempt, name, artifacts)[0]) is not None}
    transcript = None
    if program.transcript and kept is None:
        handed_in = {ANSWER_FILE: store_artifact(artifacts, attempt.answer_text.encode())
                     if attempt.answer_text is not None else None,
                     **({artifact_name: artifact_sha256} if artifact_name else {}), **checkpoints}
        transcript = store_artifact(artifacts, transcript_of(attempt, query["query_id"], agent.name, handed_in))
    return JournalRecord(
        key=record_key(query["task_hash"], query["query_id"], agent.agent_hash, agent.model, epoch),
        epoch=epoch,
        query_id=query["query_id"],
        task_id=query["task_id"],
        agent=agent.name,
        agent_hash=agent.agent_hash,
        model=agent.model,
        benchmark_id=bench_id,
        exit_code=attempt.exit_code,
        timed_out=attempt.timed_out,
        infra_error=attempt.infra_error,
        answer_text=attempt.answer_text,
        answer_problem=attempt.answer_problem,
        artifact_sha256=artifact_sha256,
        artifact_problem=artifact_problem,
        checkpoints=checkpoints,
        limits_hit=list(attempt.limits_hit),
        attempts=attempts,
        wall_seconds=attempt.wall_seconds,
        stdout=attempt.stdout,
        stderr=attempt.stderr,
        transcript_sha256=transcript,
        **fields,
    )


def transcript_of(attempt: Attempt, query_id: str, agent: str, handed_in: dict[str, str | None]) -> bytes:
    """The attempt's transcript: a loop's events, or a program's run."""
    events = list(attempt.events) or [ProgramRun(exit_code=attempt.exit_code, seconds=attempt.wall_seconds,
                                                 stdout=attempt.stdout, stderr=attempt.stderr,
                                                 limits_hit=list(attempt.limits_hit))]
    return Transcript(query_id=query_id, agent=agent, events=events, handed_in=handed_in).encode()


def run_attempt(prompt: str, public_dir: Path, program: AgentProgram, limits: Limits, hidden: list[Path],
                unsafe_no_sandbox: bool, collect: tuple[str, ...]) -> tuple[Attempt, ServiceReport]:
    """One sandboxed run, inside the program's service session when it has one (an LLM proxy).

    The service's own failure (the model API) makes the attempt an infrastructure error.
    """
    service = program.service
    with service.session() if service is not None else nullcontext(Binding()) as binding:
        bound = replace(program, env={**program.env, **binding.env},
                        ro_binds={**program.ro_binds, **binding.binds})
        attempt = run_query(prompt, public_dir, bound, limits, hidden, unsafe_no_sandbox, collect=collect)
    report = service.report(attempt) if service is not None else ServiceReport()
    if attempt.infra_error is None and report.infra_error is not None:
        attempt = replace(attempt, infra_error=report.infra_error)
    return attempt, report


def pending_queries(queries: pd.DataFrame, agent: AgentSetup, done: set[str], epochs: int = 1) -> list[dict]:
    """The (query, epoch) runs whose key is not yet in the journal, as plain dicts with an `epoch`.

    Epoch by epoch: a run stopped halfway leaves whole epochs behind it, not a few runs of each.
    """
    rows = queries.to_dict("records")
    return [
        {**row, "epoch": epoch} for epoch in range(epochs) for row in rows
        if record_key(row["task_hash"], row["query_id"], agent.agent_hash, agent.model, epoch) not in done
    ]
