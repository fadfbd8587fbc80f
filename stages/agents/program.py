"""What an agent kind produces: a program to run in the query's sandbox."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from stages.hashing import content_hash, file_sha256


@dataclass(frozen=True)
class QueryContext:
    """What the harness (not the agent) knows about a query when it builds the agent's program."""

    query_id: str
    task_id: str
    private_dir: Path


@dataclass(frozen=True)
class AgentProgram:
    """A command run with cwd `/workspace`; `agent_dir` is mounted read-only at `/agent`."""

    argv: list[str]
    agent_dir: Path | None = None
    env: dict[str, str] = field(default_factory=dict)


def directory_hash(folder: Path | None) -> str | None:
    """Content hash of every file below a folder (names and bytes), for agent-config keys."""
    if folder is None:
        return None
    files = sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return content_hash([[str(p.relative_to(folder)), file_sha256(p)] for p in files])
