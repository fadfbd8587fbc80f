r"""The append-only evaluation journal: one JSON line per finished query, keyed by content hashes.

The key hashes the task, the query, the agent configuration and the model, so a restarted run skips
exactly the finished keys and a changed agent or task runs again.

Agents control much of a record (their answer text and output tails), so a record can hold any
character. Each line is written as pure ASCII JSON (every non-ASCII character escaped, so no
U+2028, NEL or other line separator reaches the file) and the file is split on `\n` only. A line
that still does not parse (a crash mid-write, a full disk, a hand edit) is reported in `problems`
and skipped: it never stops a resume or a scoring run. A trailing partial line is cut on open so
appends stay line-aligned; a failed append is rolled back to the last complete line.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from stages.hashing import content_hash

log = logging.getLogger(__name__)


class Tokens(BaseModel):
    """Token counts as the model server reported them (None: not reported, or not plausible)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None  # part of prompt_tokens (usage.prompt_tokens_details)
    reasoning_tokens: int | None = None  # part of completion_tokens (usage.completion_tokens_details)


class ModelCall(Tokens):
    """One chat-completions call of an agent, as the harness's proxy saw it."""

    role: str
    status: int  # HTTP status the agent got (the proxy's own refusals included)
    latency_seconds: float
    upstream_attempts: int = 0  # requests sent to the model server (0: refused by the proxy)
    finish_reason: str | None = None
    model: str | None = None  # the model id the server reported
    cost_usd: float | None = None
    refused: str | None = None  # the budget that refused the call (max_turns, token_budget)
    error: str | None = None
    flags: list[str] = []  # missing or implausible usage, ignored request fields


class UsageTotals(Tokens):
    """Sums over calls; a token sum is None when no call reported it, cost None when any is unknown."""

    calls: int = 0
    cost_usd: float | None = 0.0
    seconds: float = 0.0  # summed call latency (upstream retries included)


class Usage(BaseModel):
    """What an agent's model calls used, measured by the harness (never self-reported)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    calls: list[ModelCall] = []
    roles: dict[str, UsageTotals] = {}
    total: UsageTotals = UsageTotals()
    flags: list[str] = []  # every flag of every call, once
    prices_version: str | None = None
    discarded: UsageTotals | None = None  # earlier attempts that ended in an infra error


class JournalRecord(BaseModel):
    """One finished query of one agent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    query_id: str
    task_id: str
    agent: str
    agent_hash: str
    model: str | None = None
    benchmark_id: str
    exit_code: int | None
    timed_out: bool
    infra_error: str | None
    answer_text: str | None
    attempts: int
    wall_seconds: float
    limits_hit: list[str] = []
    answer_problem: str | None = None
    artifact_sha256: str | None = None  # the artifact's bytes: <runs>/<agent>/artifacts/<sha256>
    artifact_problem: str | None = None  # why an artifact that exists was not taken
    checkpoints: dict[str, str] = {}  # checkpoint file -> sha256 of its bytes under artifacts/
    tokens: int = 0  # prompt + completion tokens of the scored attempt
    cost_usd: float | None = 0.0  # None: a call's price or usage is unknown (see usage.flags)
    stdout: str = ""
    stderr: str = ""
    usage: Usage | None = None  # model calls, for agents whose calls the harness proxies
    agent_seconds: float | None = None  # the agent's working time: wall minus waiting on the model API
    agent_limit: str | None = None  # the bound the agent stopped at (max_turns, token_budget, ...)
    execution: str | None = None  # how the agent ran, e.g. "persistent sandbox per query"
    model_reported: str | None = None  # the model id the server reported
    reused_from: str | None = None  # the earlier run whose hand-in this record grades (None: its own run)
    transcript_sha256: str | None = None  # the attempt's transcript: <runs>/<agent>/artifacts/<sha256>
    epoch: int = 0  # which of the repeated runs of the query (`evaluate.epochs`) this is


class JournalWriteError(OSError):
    """An append failed (e.g. a full disk); the file was rolled back to its last complete line."""


def record_key(task_hash: str, query_id: str, agent_hash: str, model: str | None, epoch: int = 0) -> str:
    """The journal key of one (task, query, agent configuration, model, epoch).

    Epoch 0 hashes what a key hashed before repeated runs existed, so a journal written then is
    still the first epoch of the same runs.
    """
    parts = [task_hash, query_id, agent_hash, model] + ([epoch] if epoch else [])
    return content_hash(parts, length=24)


def encode_record(record: JournalRecord) -> bytes:
    """One journal line: ASCII-only JSON and a single trailing newline."""
    return (json.dumps(record.model_dump(mode="json"), ensure_ascii=True) + "\n").encode("ascii")


class Journal:
    """An append-only JSONL file, safe to append from several threads of one process."""

    def __init__(self, path: Path):
        self.path = path
        self.problems: list[str] = []
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._repair()

    def _repair(self) -> None:
        """Cut a trailing partial line (a kill during a write) so appends stay line-aligned."""
        if not self.path.exists():
            return
        with open(self.path, "r+b") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size == 0:
                return
            handle.seek(max(0, size - 1))
            if handle.read(1) == b"\n":
                return
            data = self.path.read_bytes()
            cut = data.rfind(b"\n") + 1
            handle.truncate(cut)
        self._report(f"{self.path}: cut a partial last line of {size - cut} bytes (a write cut short)")

    def records(self) -> list[JournalRecord]:
        """Every readable record, in file order; unreadable lines are reported in `problems`."""
        if not self.path.exists():
            return []
        records = []
        for number, line in enumerate(self.path.read_bytes().split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                records.append(JournalRecord.model_validate(json.loads(line)))
            except (ValueError, ValidationError, RecursionError) as error:  # JSON, UTF-8, schema; deep nesting
                reason = str(error).splitlines()[0][:200]
                self._report(f"{self.path}:{number}: skipped, not a journal record: {reason}")
        return records

    def latest(self) -> dict[str, JournalRecord]:
        """The last record of every key."""
        return {record.key: record for record in self.records()}

    def append(self, record: JournalRecord) -> None:
        """Append one record and fsync, so a finished query survives a kill.

        Raises:
            JournalWriteError: the write failed; the file is back at its previous length.
        """
        line = encode_record(record)
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                try:
                    view = memoryview(line)
                    while view:
                        view = view[os.write(fd, view):]
                    os.fsync(fd)
                except OSError as error:
                    os.ftruncate(fd, size)
                    raise JournalWriteError(
                        error.errno, f"{self.path}: append failed, rolled back: {error.strerror}"
                    ) from error
            finally:
                os.close(fd)

    def _report(self, problem: str) -> None:
        self.problems.append(problem)
        log.warning("%s", problem)
