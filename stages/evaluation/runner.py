"""Run one program on one query: build the workspace, run it in the sandbox, keep what it wrote.

Both the annotator scripts (construction) and the agents (evaluation) go through `run_query`.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from stages.evaluation.program import AgentProgram, Attempt, warm_script
from stages.sandbox import Collected, Limits, RunResult, debris, harvest_work, run_sandboxed
from stages.sandbox.kernel import KernelDied, StartingKernel
from stages.sandbox.pools import run_warm
from stages.sandbox.warm import PoolSpec
from stages.sandbox.workspace import (
    ANSWER_FILE,
    MAX_ANSWER_BYTES,
    MAX_ARTIFACT_BYTES,
    make_workspace,
    remove_workspace,
)

LOG_TAIL = 4000
TIME_LIMITS = ("wall", "cpu")


def answer_of(collected: Collected | None) -> tuple[str | None, str | None]:
    """The answer text and, when a file exists but cannot be taken, the problem with it."""
    if collected is None or collected.missing:
        return None, None
    if collected.data is None:
        return None, collected.problem
    if len(collected.data) > MAX_ANSWER_BYTES:
        return None, f"{ANSWER_FILE} is larger than {MAX_ANSWER_BYTES} bytes"
    try:
        return collected.data.decode("utf-8"), None
    except UnicodeDecodeError as error:
        return None, f"{ANSWER_FILE} is not UTF-8 (byte {error.start})"


def run_query(
    prompt: str,
    public_dir: Path,
    program: AgentProgram,
    limits: Limits,
    hidden: list[Path],
    unsafe_no_sandbox: bool = False,
    collect: tuple[str, ...] = (),
) -> Attempt:
    """Run `program` in a fresh workspace for this prompt and public data; the workspace is removed.

    Besides `answer.json`, the files of `work/` named in `collect` (an artifact, an annotator's
    bootstrap) are taken as untrusted input, each up to `MAX_ARTIFACT_BYTES`. A `warm` program
    runs in this thread's warm pool (`AgentProgram.warm`), unless sandboxing is off.
    """
    collect_bytes = MAX_ARTIFACT_BYTES if collect else MAX_ANSWER_BYTES
    if program.loop is not None:
        result, events = run_loop(program, prompt, public_dir, limits, hidden, (ANSWER_FILE, *collect), collect_bytes)
        return replace(attempt_of(result, collect), events=events)
    if program.warm is not None and not unsafe_no_sandbox:
        script, args = warm_script(program)
        spec = PoolSpec(limits, tuple(hidden), program.warm, tuple(sorted(program.ro_binds.items())))
        result = run_warm(spec, prompt, public_dir, program.agent_dir,
                          script, (ANSWER_FILE, *collect), collect_bytes, args, program.env or None)
        return attempt_of(result, collect)
    workspace = make_workspace(prompt, public_dir)
    try:
        if program.in_process is not None:
            result = run_in_process(program.in_process, workspace, (ANSWER_FILE, *collect), collect_bytes)
        else:
            result = run_sandboxed(
                workspace,
                program.argv,
                limits=limits,
                agent_dir=program.agent_dir,
                hidden=hidden,
                extra_env=program.env,
                collect_files=(ANSWER_FILE, *collect),
                collect_bytes=collect_bytes,
                unsafe_no_sandbox=unsafe_no_sandbox,
                extra_ro_binds=program.ro_binds,
            )
    finally:
        remove_workspace(workspace)
    return attempt_of(result, collect)


def attempt_of(result: RunResult, collect: tuple[str, ...]) -> Attempt:
    """What a run left, as the harness keeps it: the answer taken apart, output tails, the files asked for."""
    answer, problem = answer_of(result.files.get(ANSWER_FILE))
    return Attempt(
        answer_text=answer,
        exit_code=result.exit_code,
        timed_out=any(limit in TIME_LIMITS for limit in result.limits_hit),
        infra_error=result.infra_error,
        wall_seconds=round(result.wall_seconds, 3),
        stdout=result.stdout[-LOG_TAIL:],
        stderr=result.stderr[-LOG_TAIL:],
        limits_hit=result.limits_hit,
        answer_problem=problem,
        files={name: result.files[name] for name in collect if name in result.files},
    )


def run_loop(program: AgentProgram, prompt: str, public_dir: Path, limits: Limits, hidden: list[Path],
             names: tuple[str, ...], cap: int) -> tuple[RunResult, tuple]:
    """Run an agent loop in the harness with the query's kernel; the hand-in is taken from the kernel's `work/`.

    Returns the run and the loop's transcript events.

    A kernel whose sandbox cannot start is an infrastructure error; one the model's code ends (it
    killed the zygote) ends the loop with what it handed in: nothing, its files went with it.
    """
    started = time.monotonic()
    with StartingKernel(limits, prompt, public_dir, hidden=hidden,
                        binds=tuple(sorted(program.ro_binds.items()))) as kernel:
        outcome = program.loop(kernel, prompt, program.env)
        if kernel.failed:  # the sandbox's failure, not the model's: retried, never scored
            return RunResult(None, False, time.monotonic() - started, "", "", kernel.failed), ()
        try:
            files, ended = kernel.hand_in(names, cap), ""
        except KernelDied as error:
            files, ended = {}, f"{error}\n"
    stopped = "the harness was stopped by a signal during the run" if debris.stopping() else None
    return RunResult(outcome.exit_code, False, time.monotonic() - started, outcome.record[-LOG_TAIL:], ended,
                     stopped, outcome.limits_hit, files, "harness loop, bwrap kernel per query"), outcome.events


def run_in_process(function: Callable[[Path], None], workspace: Path, names: tuple[str, ...],
                   cap: int) -> RunResult:
    """Call the benchmark's own `function` on the workspace; its files are taken as from a sandbox.

    An exception is the program's failure: exit code 1 with the traceback as stderr.
    """
    started = time.monotonic()
    try:
        function(workspace)
        exit_code, stderr = 0, ""
    except Exception:  # noqa: BLE001 - a failing reference model fails its query, not the run
        exit_code, stderr = 1, traceback.format_exc()
    return RunResult(exit_code, False, time.monotonic() - started, "", stderr[-LOG_TAIL:], None,
                     files=harvest_work(str(workspace / "work"), names, cap), isolation="in process")
