"""What one run did (`RunResult`), and how a finished run becomes one.

Both run paths, bwrap (`stages.sandbox`) and `--unsafe-no-sandbox` (`unsandboxed`), and the warm
pools (`warm`) make their results with these; this module imports neither of them.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field

from stages.sandbox import debris
from stages.sandbox.untrusted import Collected, collect

SIGNAL_LIMITS = {128 + signal.SIGXCPU: "cpu", 128 + signal.SIGXFSZ: "file_size"}


@dataclass(frozen=True)
class RunResult:
    """What one run did; `exit_code` is 128 + N for a program killed by signal N."""

    exit_code: int | None  # None when the harness stopped the run (limits_hit says why)
    timed_out: bool
    wall_seconds: float
    stdout: str  # decoded, the last OUTPUT_TAIL_BYTES bytes
    stderr: str
    infra_error: str | None  # the sandbox could not start the program (not: the program failed)
    limits_hit: tuple[str, ...] = ()
    files: dict[str, Collected] = field(default_factory=dict)  # taken from work/
    isolation: str = ""  # how the run was confined, e.g. "bwrap, uid 65534, cgroup v1"


def result_of(state, returncode, elapsed, files, hits, isolation) -> RunResult:
    """The `RunResult` of a watched run (`process.Watch`), on either path: bwrap or unsandboxed."""
    stderr = state.stderr.text()
    infra_error = None if state.started else stderr.strip() or f"sandbox setup exited with {returncode}"
    if debris.stopping():  # the harness got a stop signal and killed the run: not the program's result
        infra_error = "the harness was stopped by a signal during the run"
    if state.stop_reason is not None:
        exit_code = None
    elif state.done_status is not None:
        exit_code = state.done_status
    else:
        exit_code = 128 - returncode if returncode < 0 else returncode
    limits_hit = ([state.stop_reason] if state.stop_reason else []) + hits
    if exit_code in SIGNAL_LIMITS:  # the kernel's signal for a per-process rlimit
        limits_hit.append(SIGNAL_LIMITS[exit_code])
    return RunResult(exit_code, state.stop_reason == "wall", elapsed, state.stdout.text(), stderr,
                     infra_error, tuple(dict.fromkeys(limits_hit)), files, isolation)


def harvest_work(work: str, names: Sequence[str], cap: int) -> dict[str, Collected]:
    """Take the named files of `work/` as untrusted input, each up to `cap` bytes."""
    try:
        work_fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        return {name: Collected(None, f"work/ unreadable: {error.strerror}") for name in names}
    try:
        return {name: collect(work_fd, name, cap) for name in names}
    finally:
        os.close(work_fd)


