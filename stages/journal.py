"""The append-only evaluation journal: one JSON line per finished query, keyed by content hashes.

The key hashes the task, the query, the agent configuration and the model, so a restarted run skips
exactly the finished keys and a changed agent or task runs again. A line cut short by a kill is
dropped (and the file repaired) on the next open, never parsed as a result.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from stages.hashing import content_hash


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
    tokens: int = 0
    cost_usd: float = 0.0
    stdout: str = ""
    stderr: str = ""


def record_key(task_hash: str, query_id: str, agent_hash: str, model: str | None) -> str:
    """The journal key of one (task, query, agent configuration, model)."""
    return content_hash([task_hash, query_id, agent_hash, model], length=24)


class Journal:
    """An append-only JSONL file, safe to append from several threads of one process."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._repair()

    def _repair(self) -> None:
        """Cut a trailing partial line (a kill during a write) so appends stay line-aligned."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as handle:
                handle.truncate(cut)

    def records(self) -> list[JournalRecord]:
        """Every complete record, in file order; a later record for the same key wins in `latest`."""
        if not self.path.exists():
            return []
        records = []
        for number, line in enumerate(self.path.read_text().splitlines(), start=1):
            try:
                records.append(JournalRecord.model_validate_json(line))
            except ValidationError as error:
                raise ValueError(f"{self.path}:{number}: not a journal record: {error}") from error
        return records

    def latest(self) -> dict[str, JournalRecord]:
        """The last record of every key."""
        return {record.key: record for record in self.records()}

    def append(self, record: JournalRecord) -> None:
        """Append one record and fsync, so a finished query survives a kill."""
        line = record.model_dump_json() + "\n"
        with self._lock, open(self.path, "a") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
