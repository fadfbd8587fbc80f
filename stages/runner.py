"""Run one program on one query: build the workspace, run it in the sandbox, keep what it wrote.

Both the annotator scripts (construction) and the agents (evaluation) go through `run_query`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stages.agents.program import AgentProgram
from stages.params import SandboxLimits
from stages.sandbox import Limits, run_sandboxed
from stages.workspace import make_workspace, read_answer, remove_workspace

LOG_TAIL = 4000


@dataclass(frozen=True)
class Attempt:
    """What one sandboxed run left behind."""

    answer_text: str | None
    exit_code: int | None
    timed_out: bool
    infra_error: str | None
    wall_seconds: float
    stdout: str
    stderr: str


def sandbox_limits(limits: SandboxLimits) -> Limits:
    """Translate the params.yaml limits into the sandbox's."""
    return Limits(
        wall_seconds=limits.wall_seconds,
        cpu_seconds=limits.cpu_seconds,
        address_space_bytes=int(limits.memory_gb * (1 << 30)),
        file_size_bytes=limits.file_size_mb << 20,
    )


def run_query(
    prompt: str,
    public_dir: Path,
    program: AgentProgram,
    limits: Limits,
    hidden: list[Path],
    unsafe_no_sandbox: bool = False,
) -> Attempt:
    """Run `program` in a fresh workspace for this prompt and public data; the workspace is removed."""
    workspace = make_workspace(prompt, public_dir)
    try:
        result = run_sandboxed(
            workspace,
            program.argv,
            limits=limits,
            agent_dir=program.agent_dir,
            hidden=hidden,
            extra_env=program.env,
            unsafe_no_sandbox=unsafe_no_sandbox,
        )
        answer = read_answer(workspace)
    finally:
        remove_workspace(workspace)
    return Attempt(
        answer_text=answer,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        infra_error=result.infra_error,
        wall_seconds=round(result.wall_seconds, 3),
        stdout=result.stdout[-LOG_TAIL:],
        stderr=result.stderr[-LOG_TAIL:],
    )
