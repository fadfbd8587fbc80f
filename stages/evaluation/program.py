"""What runs on a query: the program an agent kind produces, any service around it, what one run left.

`stages.evaluation.runner` runs an `AgentProgram` and returns an `Attempt`; the agent kinds
(`stages.evaluation.agents`) build programs and services. Both import this module, which imports
neither.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from stages.hashing import content_hash, file_sha256
from stages.params import PriceTable
from stages.sandbox import Collected


@dataclass(frozen=True)
class Attempt:
    """What one sandboxed run left behind."""

    answer_text: str | None
    exit_code: int | None
    timed_out: bool  # stopped at the wall-clock or the CPU-time limit
    infra_error: str | None
    wall_seconds: float
    stdout: str
    stderr: str
    limits_hit: tuple[str, ...] = ()
    answer_problem: str | None = None  # why an answer.json that exists was not taken
    files: dict[str, Collected] = field(default_factory=dict)  # the other files asked for
    events: tuple = ()  # an agent loop's transcript events (stages/evaluation/transcript.py)


@dataclass(frozen=True)
class QueryContext:
    """What the harness (not the agent) knows about a query when it builds the agent's program."""

    query_id: str
    task_id: str
    private_dir: Path
    prices: PriceTable | None = None  # params.yaml `prices`, for agents whose model calls cost money
    epoch: int = 0  # which run of the query this is (`evaluate.epochs`): it moves the model's seed


@dataclass(frozen=True)
class Binding:
    """What a running service gives the sandboxed run: host folders to bind and variables to set."""

    binds: dict[Path, str] = field(default_factory=dict)  # host folder -> new top-level sandbox path
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ServiceReport:
    """What a service adds to the query's journal record after an attempt."""

    infra_error: str | None = None  # the service's own failure (e.g. the model API): not the agent's
    fields: dict[str, Any] = field(default_factory=dict)  # more JournalRecord fields


class AgentService(Protocol):
    """A harness-side service around each sandboxed attempt of one query (an LLM agent's proxy)."""

    def session(self) -> AbstractContextManager[Binding]:
        """Start before the attempt's sandbox starts; stop when it has ended."""

    def report(self, attempt: Attempt) -> ServiceReport:
        """What the attempt that just ended did, as the service saw it."""


@dataclass(frozen=True)
class AgentProgram:
    """A command run with cwd `/workspace`; `agent_dir` is mounted read-only at `/agent`.

    `in_process` is for the benchmark's own code only (the reference models): a function called
    on the workspace in the harness process instead of `argv` in a sandbox, which saves the
    sandbox and interpreter start (most of a reference model's run). Never set it for code that
    is not part of the benchmark.

    `warm` (the modules to preload) is for the benchmark's own scripts only (the annotators, the
    heuristic, the floors): `argv`, which must then be `python /agent/<script> <args>`, runs as a
    child of a warm interpreter in a long-lived sandbox, in a fresh workspace seeing only this
    query's files (`stages.sandbox.warm`), instead of a new sandbox and interpreter. The same
    bytes come out; what is saved is the start and the imports. Never set it for an agent's code.

    `kept_run` is the verify-run folder of the query (`stages.evaluation.verify_run`) when this
    program is the one construction already ran there on the same files (the oracle): the hand-in
    kept in it is graded instead of running `argv`, which runs only when the folder holds none.

    `loop` is an agent loop run in the harness (a built-in `llm` strategy): called with the query's
    kernel (`stages.sandbox.kernel.Kernel`, a sandbox of its own), the prompt and `env` (with the
    service's binding); only the code the model writes runs, as the kernel's cells. `argv` is then
    unused. It returns a `LoopOutcome` (stages.evaluation.agents.llm.loop).
    """

    argv: list[str]
    agent_dir: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    ro_binds: dict[Path, str] = field(default_factory=dict)  # more host folders, read-only
    service: AgentService | None = None
    in_process: Callable[[Path], None] | None = None
    kept_run: Path | None = None
    warm: tuple[str, ...] | None = None
    loop: Callable[[Any, str, dict[str, str]], Any] | None = None
    transcript: bool = True  # False for a program that sees private files (the oracle): it keeps none


def warm_script(program: AgentProgram) -> tuple[str, list[str]]:
    """The script under `/agent` and its arguments of a warm program's `python /agent/<script> <args>`."""
    import sys

    python, path, *args = program.argv
    folder, _, script = path.rpartition("/")
    if python != sys.executable or folder != "/agent" or not script or program.agent_dir is None:
        raise ValueError(f"a warm program runs `python /agent/<script>` from its agent_dir, not {program.argv}")
    return script, args


def directory_hash(folder: Path | None) -> str | None:
    """Content hash of every file below a folder (names and bytes), for agent-config keys."""
    if folder is None:
        return None
    files = sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return content_hash([[str(p.relative_to(folder)), file_sha256(p)] for p in files])
