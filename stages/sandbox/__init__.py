"""Run agent and annotator processes in a bubblewrap sandbox that denies by default (SPEC §4).

Inside, the workspace (made on the host by workspace.py) is `/workspace`, the cwd: `prompt.md` and
`data/` read-only, `work/` a size-capped tmpfs and the only writable place besides `/tmp` and
`/dev/shm`. The filesystem is an allowlist (filesystem.py); the program is an unprivileged host
user with no capabilities, in its own PID, network, IPC and UTS namespaces, under a seccomp filter
(command.py, seccomp.py); a per-run cgroup holds memory, process and CPU totals where one can be
made (cgroups.py), rlimits bind each process; the harness reads output as it comes in bounded
tails, stops the run at the wall clock, the CPU total or the output cap (process.py), and copies
the files it was asked for out of `work/` as untrusted input (untrusted.py) before the namespace,
and its tmpfs, end.

Each limit the run ran into is named in `RunResult.limits_hit`:
`wall`, `cpu`, `output` (stopped by the harness), `memory`, `pids` (enforced by the cgroup),
`disk:work`, `disk:tmp`, `disk:shm` (a tmpfs full); `cpu` and `file_size` also when a process
died of the per-process rlimit's signal (SIGXCPU, SIGXFSZ).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from stages.sandbox import cgroups, command, debris, filesystem, process, seccomp, unsandboxed
from stages.sandbox.filesystem import AGENT_MOUNT, WORKSPACE, Sizes, python_runtime_paths
from stages.sandbox.limits import Limits, SandboxLimits
from stages.sandbox.result import SIGNAL_LIMITS, RunResult, harvest_work, result_of
from stages.sandbox.untrusted import Collected

log = logging.getLogger(__name__)

INSTALL_HINT = "apt-get install -y bubblewrap"

__all__ = ["AGENT_MOUNT", "SIGNAL_LIMITS", "WORKSPACE", "Collected", "Limits", "RunResult", "SandboxLimits",
           "SandboxUnavailable", "bwrap_available", "harvest_work", "python_runtime_paths", "run_sandboxed"]


class SandboxUnavailable(RuntimeError):
    """bubblewrap is not installed and the caller did not allow an unsandboxed run."""


def bwrap_available() -> bool:
    """Return whether the `bwrap` executable is on PATH."""
    return shutil.which("bwrap") is not None


def run_sandboxed(
    workspace: Path,
    argv: list[str],
    *,
    limits: Limits,
    agent_dir: Path | None = None,
    hidden: Sequence[Path] = (),
    extra_env: dict[str, str] | None = None,
    collect_files: Sequence[str] = ("answer.json",),
    collect_bytes: int = 1 << 20,
    unsafe_no_sandbox: bool = False,
    extra_ro_binds: Mapping[Path, str] | None = None,
) -> RunResult:
    """Run `argv` with `workspace` at /workspace under `limits`; wait and return the result.

    A sandbox that could not start the program is reported in `infra_error`, not raised.

    Args:
        workspace: Host directory with `prompt.md`, `data/` and (for unsandboxed runs) `work/`.
        argv: Program and arguments; a bare program name is looked up on the sandbox PATH.
        limits: Totals, rlimits, tmpfs sizes and the wall-clock timeout.
        agent_dir: Host directory with the agent's own files, bound read-only at /agent.
        hidden: Host paths to cover wherever they fall inside a visible path.
        extra_env: Variables added to (or overriding) the whitelisted environment.
        collect_files: Names in `work/` to copy out (each read as untrusted input).
        collect_bytes: The most bytes taken of each collected file.
        unsafe_no_sandbox: If bwrap is missing, run `argv` directly in `workspace` (same rlimits,
            timeout and environment, HOME under `work/`) and log a warning.
        extra_ro_binds: Host directory -> a new top-level path where it is bound read-only (e.g.
            a model proxy's socket folder at `/llm`); unsandboxed, an `extra_env` value under such
            a path is rewritten to the host directory instead.

    Raises:
        SandboxUnavailable: bwrap is missing and `unsafe_no_sandbox` is False.
    """
    workspace = workspace.resolve()
    debris.start_harness()
    if debris.stopping():
        return RunResult(None, False, 0.0, "", "", "the harness was stopped by a signal before the run")
    if not bwrap_available():
        if not unsafe_no_sandbox:
            raise SandboxUnavailable(
                f"bubblewrap (bwrap) is not installed: install it with `{INSTALL_HINT}`, "
                "or allow an unsandboxed run explicitly (--unsafe-no-sandbox)"
            )
        log.warning("bwrap unavailable: running %s UNSANDBOXED in %s", argv, workspace)
        return unsandboxed.run_unsandboxed(workspace, argv, limits, extra_env, collect_files, collect_bytes,
                               extra_ro_binds or {})
    return _run_in_bwrap(workspace, argv, limits, agent_dir, list(hidden), extra_env,
                         collect_files, collect_bytes, extra_ro_binds or {})


def _run_in_bwrap(workspace, argv, limits, agent_dir, hidden, extra_env, names, cap, binds) -> RunResult:
    identity = command.sandbox_identity()
    runtime = python_runtime_paths()
    env = command.environment(runtime, f"{WORKSPACE}/work", extra_env)
    group = cgroups.create(cgroups.Totals(limits.memory_bytes, limits.processes, limits.cpu_cores,
                                          limits.cpu_seconds)) if identity.as_root else None
    report_r, report_w = os.pipe()
    info_r, info_w = os.pipe()
    data_fds = [_memfd("seccomp", seccomp.filter_program())]
    etc_fds = {name: _memfd(name, text.encode())
               for name, text in filesystem.etc_files(identity.uid, identity.gid).items()}
    sizes = Sizes(limits.work_bytes, limits.tmp_bytes, limits.shm_bytes)
    bwrap = ["bwrap", *filesystem.mount_args(workspace, agent_dir=agent_dir, runtime_paths=runtime,
                                             hidden=hidden, sizes=sizes, etc_fds=etc_fds,
                                             extra_ro_binds=binds),
             *command.namespace_args(identity, data_fds[0], info_w), "--clearenv",
             *[a for key, value in env.items() for a in ("--setenv", key, value)],
             "--", *command.privilege_drop(identity), *command.LAUNCHER, *argv]
    # With a cgroup, its CPU total stops the run; each process's RLIMIT_CPU is a second later backstop.
    prefix = command.enter_cgroups(group.procs_files if group else []) + command.rlimit_prefix(
        limits.cpu_seconds + (1 if group else 0), limits.address_space_bytes,
        limits.file_size_bytes, None if group else limits.processes)
    files: dict[str, Collected] = {}
    full: list[str] = []
    start = time.monotonic()
    try:
        proc = subprocess.Popen(prefix + bwrap, stdin=report_w, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, env=command.launcher_environment(),
                                pass_fds=(info_w, *data_fds, *etc_fds.values()))
    except OSError as exc:
        _close(report_r, report_w, info_r, info_w, *data_fds, *etc_fds.values())
        if group:
            group.remove()
        return RunResult(None, False, time.monotonic() - start, "", "", f"cannot start: {exc}")
    _close(report_w, info_w, *data_fds, *etc_fds.values())
    debris.track(proc)

    def harvest(state: process.Watch) -> None:
        root = f"/proc/{state.sandbox_pid}/root"
        files.update(harvest_work(f"{root}{WORKSPACE}/work", names, cap))
        full.extend(_full_tmpfs(root))

    def force(state: process.Watch) -> None:
        process.signal_quietly(state.sandbox_pid, signal.SIGKILL)
        process.kill_group(proc)

    try:
        state = process.watch(
            proc, report_r, info_r, wall_seconds=limits.wall_seconds,
            output_bytes=limits.output_bytes,
            over_cpu=group.over_cpu_budget if group else lambda: False,
            on_done=harvest,
            stop=lambda s: stop_launcher(s, force),
            force=force)
    finally:
        debris.untrack(proc)
        _close(report_r, info_r)
        hit_by_cgroup = group.limits_hit() if group else []
        if group:
            group.remove()
    isolation = f"bwrap, uid {identity.uid}, " + (f"cgroup v{group.version}" if group
                                                  else "no cgroup: per-process rlimits only")
    return result_of(state, proc.returncode, time.monotonic() - start, files,
                   [*hit_by_cgroup, *full], isolation)


def stop_launcher(state: process.Watch, force) -> None:
    """SIGTERM the launcher (the child of bwrap's init), or force the end when there is none yet."""
    launchers = process.children_of(state.sandbox_pid) if state.sandbox_pid else []
    if not launchers:
        force(state)
    for pid in launchers:
        process.signal_quietly(pid, signal.SIGTERM)


def _full_tmpfs(root: str) -> list[str]:
    """Which writable tmpfs mounts are full (`disk:work`, `disk:tmp`, `disk:shm`)."""
    full = []
    for label, path in (("work", f"{WORKSPACE}/work"), ("tmp", "/tmp"), ("shm", "/dev/shm")):
        with contextlib.suppress(OSError):
            info = os.statvfs(f"{root}{path}")
            if info.f_bavail * info.f_frsize < 64 << 10:
                full.append(f"disk:{label}")
    return full


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(f"scibench-{name}")
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _close(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
