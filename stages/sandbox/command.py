"""The command line of one sandboxed run: cgroup entry, rlimits, bwrap, privilege drop, launcher.

    sh (enter the run's cgroups) -> prlimit -> bwrap -> setpriv (root only) -> sh launcher -> program

Who the program is on the host:
- Harness started by root: bwrap builds the mounts without a user namespace (a user namespace
  made by root maps the sandbox uid to host root) and the program runs under `setpriv` as uid/gid
  65534 with no capabilities, no supplementary groups and no_new_privs. bwrap keeps only the three
  capabilities setpriv needs to get there.
- Harness started by another user: bwrap makes an unprivileged user namespace; the program is that
  user on the host, with no capabilities outside, and cannot make further user namespaces.
In both, a seccomp filter (seccomp.py) refuses nested user namespaces and a few kernel interfaces.

bwrap's own init is the PID namespace's PID 1: it keeps `--die-with-parent` working (a program run
as the namespace's init after setpriv changed its uid outlived a killed harness) and, being root
when the harness is, cannot be signalled or traced by the program. The launcher is `/bin/sh`, its
child. It writes a byte to its stdin (a harness
pipe) before anything else, so a run without that byte failed in setup (`infra_error`), which a
program cannot fake by printing `bwrap: ...`. It keeps that pipe on fd 3 for itself, runs the
program with stdin from /dev/null and without fd 3, waits for it, SIGKILLs every process left in
the namespace (daemons, a SIGTERM-ignoring loop), and reports `done <exit status>`. The harness
then copies what it needs out of `work/` (a tmpfs that vanishes with the namespace) and ends the
run. SIGTERM to the launcher (the harness's stop: wall clock, CPU budget, output cap) kills every
other process first and takes the same path.
"""

from __future__ import annotations

import os
import resource
import shutil
from dataclasses import dataclass
from pathlib import Path

from stages.sandbox.filesystem import WORKSPACE

SANDBOX_ID = 65534  # nobody / nogroup, when the harness runs as root
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
PASSTHROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
SETPRIV_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")

LAUNCHER = (
    "/bin/sh", "-c",
    'printf x >&0 || exit 125; exec 3>&0 0</dev/null; '
    "trap 'kill -KILL -1 2>/dev/null' TERM; "
    '"$@" 3>&- & wait $!; code=$?; '
    "kill -KILL -1 2>/dev/null; wait; "
    'printf "done %d\\n" "$code" >&3; exec sleep 3600',
    "sh",
)
UNSANDBOXED_LAUNCHER = ("/bin/sh", "-c", 'printf x >&0 && exec 0</dev/null && "$@"; exit $?', "sh")
ENTER_CGROUPS = (
    "/bin/sh", "-c",
    'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; exec "$@"',
    "sh",
)


@dataclass(frozen=True)
class Identity:
    """Who the program is on the host, and how bwrap gets it there."""

    uid: int
    gid: int
    as_root: bool  # the harness is root: no user namespace, setpriv drops to `uid`


def sandbox_identity() -> Identity:
    """The host uid/gid the program runs as; never 0."""
    if os.geteuid() == 0:
        return Identity(SANDBOX_ID, SANDBOX_ID, as_root=True)
    return Identity(os.geteuid(), os.getegid(), as_root=False)


def environment(runtime: list[Path], work: str, extra: dict[str, str] | None) -> dict[str, str]:
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


def namespace_args(identity: Identity, seccomp_fd: int, info_fd: int) -> list[str]:
    """The namespace, privilege and process options of bwrap."""
    args = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--hostname", "sandbox", "--seccomp", str(seccomp_fd), "--info-fd", str(info_fd)]
    if identity.as_root:
        args += ["--cap-drop", "ALL"] + [a for cap in SETPRIV_CAPS for a in ("--cap-add", cap)]
    else:
        args += ["--unshare-user", "--disable-userns"]
    return [*args, "--die-with-parent", "--new-session", "--chdir", WORKSPACE]


def privilege_drop(identity: Identity) -> list[str]:
    """The `setpriv` prefix that makes the program an unprivileged host user (root harness only)."""
    if not identity.as_root:
        return []
    # A uid change clears the parent-death signal bwrap set (--die-with-parent); set it again, or a
    # killed harness would leave the sandbox running.
    return [
        "setpriv", f"--reuid={identity.uid}", f"--regid={identity.gid}", "--clear-groups",
        "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--pdeathsig=KILL",
    ]


def launcher_environment() -> dict[str, str]:
    """The environment bwrap and the launchers before it start with: `PATH` alone.

    The sandbox's own environment is set by `--clearenv` and `--setenv`, but bwrap's init keeps the
    environment it was started with, and code in the sandbox can read it at `/proc/1/environ` when
    it runs as the harness's user (an unprivileged harness): no variable of the harness (an API
    key) may be in it.
    """
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def rlimit_prefix(
    cpu_seconds: int, address_space: int, file_size: int, processes: int | None
) -> list[str]:
    """A `prlimit` prefix setting soft = hard rlimits, capped at the current hard limits.

    prlimit (util-linux) applies them in the child after exec; unlike a `preexec_fn` it is safe
    when the harness runs many sandboxes from threads. No core files: a crash must not reach the
    host's core handler. `processes` is None when a cgroup holds the run's process total.
    """
    wanted = {  # soft, hard
        "cpu": (resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),  # SIGXCPU, then SIGKILL
        "as": (resource.RLIMIT_AS, address_space, address_space),
        "fsize": (resource.RLIMIT_FSIZE, file_size, file_size),
        "core": (resource.RLIMIT_CORE, 0, 0),
    }
    if processes is not None:
        wanted["nproc"] = (resource.RLIMIT_NPROC, processes, processes)
    prefix = [shutil.which("prlimit") or "prlimit"]
    for name, (kind, soft, hard) in wanted.items():
        ceiling = resource.getrlimit(kind)[1]
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        prefix.append(f"--{name}={soft}:{hard}")
    return [*prefix, "--"]


def enter_cgroups(procs_files: list[Path]) -> list[str]:
    """A prefix that moves itself into each cgroup, then execs the rest of the command."""
    if not procs_files:
        return []
    # Kept out of `make mutation`: without its `--` the prefix writes 0 into every argument after the
    # procs files, /usr/bin/prlimit first, which a mutant run as root then does.
    return [*ENTER_CGROUPS, *map(str, procs_files), "--"]  # pragma: no mutate
