"""Run agent and annotator processes in a bubblewrap sandbox (SPEC §4).

Inside, the workspace is `/workspace` (the cwd; only `work/` is writable) and an optional agent
directory is `/agent`. The host is read-only; `/tmp`, `/root`, `/home`, `/var/tmp`, `/run` and the
hidden paths are empty tmpfs, and the Python runtime is bound back. `--ro-bind / /` leaves no place
for `/workspace`, so each entry of `/` is bound onto bwrap's tmpfs root, remounted read-only after
(as Flatpak does). `/bin/sh`, as PID 1, writes a byte to its stdin (a harness pipe), swaps stdin
for /dev/null and runs the program, so nothing inside can reach the pipe: a run without the byte
failed in sandbox setup (`infra_error`), which an agent cannot fake by printing `bwrap: ...`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SANDBOX_ID = "65534"  # nobody / nogroup
WORKSPACE = "/workspace"
AGENT_MOUNT = "/agent"
OUTPUT_TAIL_CHARS = 20_000
MASKED_DIRS = (Path("/tmp"), Path("/root"), Path("/home"), Path("/var/tmp"), Path("/run"))
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
PASSTHROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
INSTALL_HINT = "apt-get install -y bubblewrap"
_LAUNCHER = ("/bin/sh", "-c", 'printf x >&0 && exec 0</dev/null && "$@"; exit $?', "sh")
_KILL_GRACE_SECONDS = 10.0


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run; CPU, memory and file-size rlimits bind each process alone."""

    wall_seconds: float = 600.0
    cpu_seconds: int = 600
    address_space_bytes: int = 8 << 30
    file_size_bytes: int = 1 << 30
    processes: int = 512


@dataclass(frozen=True)
class RunResult:
    """What one run did; `exit_code` is 128 + N for a program killed by signal N."""

    exit_code: int | None  # None when killed by the wall-clock timeout
    timed_out: bool
    wall_seconds: float
    stdout: str  # decoded, the last OUTPUT_TAIL_CHARS characters
    stderr: str
    infra_error: str | None  # the sandbox could not start the program (not: the program failed)


class SandboxUnavailable(RuntimeError):
    """bubblewrap is not installed and the caller did not allow an unsandboxed run."""


def bwrap_available() -> bool:
    """Return whether the `bwrap` executable is on PATH."""
    return shutil.which("bwrap") is not None


def python_runtime_paths() -> list[Path]:
    """Return the interpreter's prefixes and executable directory, each as given and resolved.

    Binding them back keeps a venv (and the Python it links to) working under a hidden directory.
    """
    raws = (sys.prefix, sys.base_prefix, Path(sys.executable).parent)
    paths = (path for raw in raws for path in (Path(os.path.abspath(raw)), Path(raw).resolve()))
    return list(dict.fromkeys(paths))


def build_bwrap_argv(
    workspace: Path,
    argv: list[str],
    *,
    agent_dir: Path | None,
    hidden: list[Path],
    runtime_paths: list[Path],
    env: dict[str, str],
) -> list[str]:
    """Return the bwrap argument vector that runs `argv` in `workspace` (see module docstring).

    Args:
        workspace: Host directory with `prompt.md`, `data/` and `work/`.
        argv: Program and arguments; a bare program name is looked up on `env["PATH"]`.
        agent_dir: Host directory to bind read-only at `/agent`, or None.
        hidden: Host paths to make invisible (missing ones are skipped); the workspace and the
            runtime paths are bound after them, so they may lie inside a hidden directory.
        runtime_paths: Host directories to bind back read-only at the same place.
        env: The complete environment of the program.
    """
    ws = workspace.resolve()
    args = ["bwrap", *_root_binds(), "--dev", "/dev", "--proc", "/proc"]
    args += _mask_and_rebind([*MASKED_DIRS, *hidden], runtime_paths)
    for flag, name in (("--ro-bind", "prompt.md"), ("--ro-bind", "data"), ("--bind", "work")):
        args += [flag, str(ws / name), f"{WORKSPACE}/{name}"]
    if agent_dir is not None:
        args += ["--ro-bind", os.path.abspath(agent_dir), AGENT_MOUNT]
    args += ["--remount-ro", "/", "--chdir", WORKSPACE, "--unshare-all", "--unshare-user"]
    args += ["--uid", SANDBOX_ID, "--gid", SANDBOX_ID, "--as-pid-1", "--die-with-parent"]
    args += ["--new-session", "--clearenv"]
    args += [arg for key, value in env.items() for arg in ("--setenv", key, value)]
    return [*args, "--", *argv]


def run_sandboxed(
    workspace: Path,
    argv: list[str],
    *,
    limits: Limits,
    agent_dir: Path | None = None,
    hidden: Sequence[Path] = (),
    extra_env: dict[str, str] | None = None,
    unsafe_no_sandbox: bool = False,
) -> RunResult:
    """Run `argv` with `workspace` at /workspace under `limits`; wait and return the result.

    A sandbox that could not start the program is reported in `infra_error`, not raised.

    Args:
        workspace: Host directory with `prompt.md`, `data/` and `work/`.
        argv: Program and arguments; a bare program name is looked up on the sandbox PATH.
        limits: rlimits and the wall-clock timeout.
        agent_dir: Host directory with the agent's own files, bound read-only at /agent.
        hidden: Host paths to hide (the project root and the benchmark directory).
        extra_env: Variables added to (or overriding) the whitelisted environment.
        unsafe_no_sandbox: If bwrap is missing, run `argv` directly in `workspace` (same rlimits,
            timeout and environment, HOME under `work/`) and log a warning.

    Raises:
        SandboxUnavailable: bwrap is missing and `unsafe_no_sandbox` is False.
    """
    workspace, runtime = workspace.resolve(), python_runtime_paths()
    if not bwrap_available():
        if not unsafe_no_sandbox:
            raise SandboxUnavailable(
                f"bubblewrap (bwrap) is not installed: install it with `{INSTALL_HINT}`, "
                "or allow an unsandboxed run explicitly (--unsafe-no-sandbox)"
            )
        log.warning("bwrap unavailable: running %s UNSANDBOXED in %s", argv, workspace)
        env = _environment(runtime, str(workspace / "work"), extra_env)
        return _execute([*_LAUNCHER, *argv], workspace, env, limits, sandboxed=False)
    env = _environment(runtime, f"{WORKSPACE}/work", extra_env)
    command = build_bwrap_argv(
        workspace,
        [*_LAUNCHER, *argv],
        agent_dir=agent_dir,
        hidden=list(hidden),
        runtime_paths=runtime,
        env=env,
    )
    return _execute(command, workspace, None, limits, sandboxed=True)


def _root_binds() -> list[str]:
    """Bind each top-level entry of the host `/` read-only, recreating top-level symlinks."""
    args: list[str] = []
    skip = {"dev", "proc", WORKSPACE[1:], AGENT_MOUNT[1:]}  # made fresh by bwrap
    for entry in sorted(entry for entry in Path("/").iterdir() if entry.name not in skip):
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry), str(entry)]
        elif entry.is_dir() or entry.is_file():
            args += ["--ro-bind", str(entry), str(entry)]
    return args


def _mask_and_rebind(masks: list[Path], binds: list[Path]) -> list[str]:
    """Cover `masks` with empty tmpfs and bind `binds` back read-only, shallowest path first.

    Ordering by depth (masks first at equal depth) lets a runtime under a hidden directory
    reappear while a hidden directory under a runtime path stays hidden.
    """
    ops = {(len(p.resolve().parts), 0, p.resolve()) for p in masks if p.exists()}
    for path in map(Path, map(os.path.abspath, binds)):
        if path.exists() and path != Path("/"):
            ops.add((len(path.parts), 1, path))
    args: list[str] = []
    for _, is_bind, path in sorted(ops):
        args += ["--ro-bind", str(path), str(path)] if is_bind else ["--tmpfs", str(path)]
    return args


def _environment(runtime: list[Path], work: str, extra: dict[str, str] | None) -> dict[str, str]:
    """Return the whitelisted environment, with the runtime's bin directories first on PATH."""
    bins = [path if path.name == "bin" else path / "bin" for path in runtime]
    search = [str(b) for b in bins if b.is_dir()] + list(SYSTEM_PATH)
    env = {
        "PATH": ":".join(dict.fromkeys(search)),
        "HOME": work,
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLCONFIGDIR": f"{work}/.mpl",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "LANG": "C.UTF-8",
    }
    env |= {key: os.environ[key] for key in PASSTHROUGH_ENV if key in os.environ}
    return env | (extra or {})


def _rlimit_prefix(limits: Limits) -> list[str]:
    """A `prlimit` command prefix setting soft = hard rlimits, capped at the current hard limits.

    prlimit (util-linux) applies them in the child after exec; unlike a `preexec_fn` it is safe
    when the harness runs many sandboxes from threads.
    """
    wanted = {
        "cpu": (resource.RLIMIT_CPU, limits.cpu_seconds),
        "as": (resource.RLIMIT_AS, limits.address_space_bytes),
        "fsize": (resource.RLIMIT_FSIZE, limits.file_size_bytes),
        "nproc": (resource.RLIMIT_NPROC, limits.processes),
    }
    prefix = [shutil.which("prlimit") or "prlimit"]
    for name, (kind, value) in wanted.items():
        hard = resource.getrlimit(kind)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        prefix.append(f"--{name}={value}")
    return [*prefix, "--"]


def _execute(
    command: list[str], cwd: Path, env: dict[str, str] | None, limits: Limits, *, sandboxed: bool
) -> RunResult:
    """Run `command` (ending in the launcher) in a new session under rlimits and a timeout."""
    started_read, started_write = os.pipe()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            _rlimit_prefix(limits) + command,
            cwd=cwd,
            env=env,
            stdin=started_write,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        os.close(started_read)
        return RunResult(None, False, time.monotonic() - start, "", "", f"cannot start: {exc}")
    finally:
        os.close(started_write)
    try:
        out, err = proc.communicate(timeout=limits.wall_seconds)
        timed_out = False
    except subprocess.TimeoutExpired:
        out, err = _kill_and_collect(proc, sandboxed=sandboxed)
        timed_out = True
    elapsed, code = time.monotonic() - start, proc.returncode
    stdout, stderr = (data.decode(errors="replace")[-OUTPUT_TAIL_CHARS:] for data in (out, err))
    readable = select.select([started_read], [], [], 0)[0]
    started = bool(readable) and os.read(started_read, 1) == b"x"
    os.close(started_read)
    infra_error = None if started else stderr.strip() or f"sandbox setup exited with {code}"
    exit_code = None if timed_out else (128 - code if code < 0 else code)
    return RunResult(exit_code, timed_out, elapsed, stdout, stderr, infra_error)


def _kill_and_collect(proc: subprocess.Popen[bytes], *, sandboxed: bool) -> tuple[bytes, bytes]:
    """SIGKILL a timed-out run and its process group, reap it and return its output.

    With bwrap, its child (the sandbox's PID 1) is killed first: that ends the PID namespace and
    lets bwrap reap it, where killing bwrap first would leave a zombie if init does not reap.
    """
    if sandboxed:
        for pid in _children(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            return proc.communicate(timeout=_KILL_GRACE_SECONDS)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        return proc.communicate(timeout=_KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:  # unsandboxed: a process left the group, holds the pipes
        for stream in (proc.stdout, proc.stderr):
            stream.close()  # type: ignore[union-attr]
        proc.wait()
        return b"", b"output lost: a process outside the killed group kept the pipes open"


def _children(pid: int) -> list[int]:
    """Return the pids whose parent is `pid`, read from /proc/*/stat."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found
