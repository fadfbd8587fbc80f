"""The explicit, logged `--unsafe-no-sandbox` path: the program runs as the harness's own user.

For trusted programs on machines without bubblewrap only. The same rlimits, wall clock, output
cap, environment and untrusted reading of `work/` apply; there is no filesystem, network or
privilege isolation, and the run's process group is killed at a stop.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from stages.sandbox import command, debris, process
from stages.sandbox.filesystem import python_runtime_paths
from stages.sandbox.limits import Limits
from stages.sandbox.result import RunResult, harvest_work, result_of
from stages.sandbox.untrusted import Collected


def run_unsandboxed(
    workspace: Path,
    argv: list[str],
    limits: Limits,
    extra_env: dict[str, str] | None,
    names: Sequence[str],
    cap: int,
    binds: Mapping[Path, str] | None = None,
) -> RunResult:
    """Run `argv` in `workspace` directly; `work/` is the workspace's own folder.

    Nothing is bound here: a variable of `extra_env` naming a path under a bind's place (`/llm/...`)
    is pointed at the host directory instead, so the program finds what the sandbox would bind.
    """
    runtime = python_runtime_paths()
    env = command.environment(runtime, str(workspace / "work"), rebased(extra_env or {}, binds or {}))
    report_r, report_w = os.pipe()
    start = time.monotonic()
    prefix = command.rlimit_prefix(limits.cpu_seconds, limits.address_space_bytes,
                                   limits.file_size_bytes, limits.processes)
    try:
        proc = subprocess.Popen([*prefix, *command.UNSANDBOXED_LAUNCHER, *argv], cwd=workspace,
                                env=env, stdin=report_w, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        os.close(report_r)
        return RunResult(None, False, time.monotonic() - start, "", "", f"cannot start: {exc}")
    finally:
        os.close(report_w)
    debris.track(proc)
    try:
        state = process.watch(
            proc, report_r, None, wall_seconds=limits.wall_seconds,
            output_bytes=limits.output_bytes, over_cpu=lambda: False, on_done=lambda s: None,
            stop=lambda s: process.kill_group(proc), force=lambda s: process.kill_group(proc))
    finally:
        debris.untrack(proc)
        os.close(report_r)
    files: dict[str, Collected] = harvest_work(str(workspace / "work"), names, cap)
    return result_of(state, proc.returncode, time.monotonic() - start, files, [],
                   "none: --unsafe-no-sandbox")


def rebased(env: dict[str, str], binds: Mapping[Path, str]) -> dict[str, str]:
    """`env` with each value at or under a bind's sandbox place moved to the bound host directory."""
    moved = dict(env)
    for host, inside in binds.items():
        for key, value in env.items():
            if value == inside or value.startswith(inside + "/"):
                moved[key] = str(host) + value[len(inside):]
    return moved
