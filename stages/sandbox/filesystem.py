"""The sandbox's filesystem: an allowlist of what a program needs, nothing else of the host.

Visible inside, read-only: `/usr` and the top-level system entries (`/bin`, `/sbin`, `/lib*`, as
directories or the merged-/usr symlinks they are on the host), a minimal `/etc` (the dynamic
loader's cache and config, time zone, `alternatives` links, name-service config; `passwd`,
`group`, `hosts` and `hostname` written for the sandbox, so no host account or secret is there),
the Python runtime (the interpreter's prefixes, wherever they live), `/agent`, the workspace's
`prompt.md` and `data/`, and any extra host directory the caller binds at a new top-level name (an
agent's model proxy socket at `/llm`). Writable and size-capped: `/workspace/work`, `/tmp` and `/dev/shm`, each a
fresh tmpfs. `/proc` is the sandbox's own PID namespace; `/sys` is absent.

Every directory bwrap creates on the way to a mount point is made 0755: bwrap makes them 0700
otherwise, and the unprivileged user inside could not reach a runtime under `/root`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

WORKSPACE = "/workspace"
AGENT_MOUNT = "/agent"
SYSTEM_DIRS = ("/usr",)
SYSTEM_ENTRIES = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
EXTRA_MOUNT = re.compile(r"/[a-z][a-z0-9_-]{0,31}")
ETC_ENTRIES = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
               "timezone", "nsswitch.conf", "os-release", "mime.types")


@dataclass(frozen=True)
class Sizes:
    """Byte caps of the writable tmpfs mounts."""

    work_bytes: int
    tmp_bytes: int
    shm_bytes: int


def python_runtime_paths() -> list[Path]:
    """Return the interpreter's prefixes and executable directory, each as given and resolved."""
    raws = (sys.prefix, sys.base_prefix, Path(sys.executable).parent)
    paths = (path for raw in raws for path in (Path(os.path.abspath(raw)), Path(raw).resolve()))
    return list(dict.fromkeys(paths))


def etc_files(uid: int, gid: int) -> dict[str, str]:
    """The generated /etc files: one account for the sandbox user, loopback only."""
    return {
        "passwd": f"root:x:0:0::/nonexistent:/usr/sbin/nologin\nagent:x:{uid}:{gid}::{WORKSPACE}/work:/bin/sh\n",
        "group": f"root:x:0:\nagent:x:{gid}:\n",
        "hosts": "127.0.0.1 localhost\n::1 localhost\n",
        "hostname": "sandbox\n",
    }


def mount_args(
    workspace: Path,
    *,
    agent_dir: Path | None,
    runtime_paths: list[Path],
    hidden: list[Path],
    sizes: Sizes,
    etc_fds: dict[str, int],
    extra_ro_binds: Mapping[Path, str] | None = None,
) -> list[str]:
    """The bwrap mount arguments for one run (see the module docstring).

    Args:
        workspace: Host directory with `prompt.md` and `data/`.
        agent_dir: Host directory to bind read-only at /agent, or None.
        runtime_paths: Host directories of the Python runtime, bound read-only at the same place.
        hidden: Host paths covered with an empty tmpfs wherever they fall inside a visible path
            (e.g. a project checkout that holds the runtime's venv).
        sizes: Caps of the writable mounts.
        etc_fds: /etc file name -> a readable fd holding its generated content.
        extra_ro_binds: Host directory -> a new top-level path (`/llm`) where it is bound read-only.

    Raises:
        ValueError: An extra bind is not a host directory, or its place is not a new top-level name.
    """
    args = base_mounts(runtime_paths, hidden, sizes, etc_fds)
    ws = workspace.resolve()
    args += ["--perms", "0755", "--dir", WORKSPACE]
    args += ["--ro-bind", str(ws / "prompt.md"), f"{WORKSPACE}/prompt.md"]
    args += ["--ro-bind", str(ws / "data"), f"{WORKSPACE}/data"]
    args += ["--perms", "1777", "--size", str(sizes.work_bytes), "--tmpfs", f"{WORKSPACE}/work"]
    if agent_dir is not None:
        args += ["--ro-bind", os.path.abspath(agent_dir), AGENT_MOUNT]
    args += extra_binds(extra_ro_binds or {}, runtime_paths)
    return [*args, "--remount-ro", "/"]



def base_mounts(runtime_paths: list[Path], hidden: list[Path], sizes: Sizes,
                etc_fds: dict[str, int]) -> list[str]:
    """The mounts every sandbox has: the system, /etc, /proc, /dev, /tmp, /dev/shm and the runtime.

    A cold run's workspace and /agent, or a warm pool's folders (warm.py), come after these.
    """
    args: list[str] = []
    visible: list[Path] = []
    for name in SYSTEM_DIRS:
        args += ["--ro-bind", name, name]
        visible.append(Path(name))
    for name in SYSTEM_ENTRIES:
        entry = Path(name)
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry), name]
        elif entry.is_dir():
            args += ["--ro-bind", name, name]
            visible.append(entry)
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_ENTRIES:
        entry = Path("/etc") / name
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry), str(entry)]
        elif entry.exists():
            args += ["--ro-bind", str(entry), str(entry)]
    for name, fd in sorted(etc_fds.items()):
        args += ["--perms", "0644", "--ro-bind-data", str(fd), f"/etc/{name}"]
    # The writable tmpfs mounts come before the runtime, which may live under /tmp on the host.
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", str(sizes.shm_bytes), "--tmpfs", "/dev/shm"]
    args += ["--remount-ro", "/dev"]  # under a user namespace bwrap's /dev tmpfs belongs to the user
    args += ["--perms", "1777", "--size", str(sizes.tmp_bytes), "--tmpfs", "/tmp"]
    args += _runtime_binds(runtime_paths, visible)
    visible += [p.resolve() for p in runtime_paths]
    args += _masks(hidden, visible)
    return args

def extra_binds(binds: Mapping[Path, str], runtime_paths: list[Path]) -> list[str]:
    """`--ro-bind` for each extra host directory, each at a top-level name nothing else uses."""
    taken = {Path(p).name for p in (*SYSTEM_DIRS, *SYSTEM_ENTRIES)} | {"etc", "proc", "dev", "tmp"}
    taken |= {Path(WORKSPACE).name, Path(AGENT_MOUNT).name, "warm", "pool", "scratch"}  # the last: warm pools
    taken |= {part for p in runtime_paths for part in (Path(os.path.abspath(p)).parts[1:2]
                                                        + p.resolve().parts[1:2])}
    args: list[str] = []
    for host, inside in sorted(binds.items(), key=lambda item: item[1]):
        if not EXTRA_MOUNT.fullmatch(inside) or inside[1:] in taken:
            raise ValueError(f"extra bind {inside!r}: not a new top-level name (taken: {sorted(taken)})")
        if not Path(host).is_dir():
            raise ValueError(f"extra bind {inside!r}: {host} is not a directory")
        args += ["--ro-bind", str(Path(host).resolve()), inside]
        taken.add(inside[1:])
    return args


def _runtime_binds(runtime_paths: list[Path], visible: list[Path]) -> list[str]:
    """Bind each runtime directory (resolved) not already visible; recreate symlinked spellings."""
    args: list[str] = []
    made: set[Path] = {Path("/"), Path("/tmp"), Path("/dev")}
    for path in runtime_paths:
        real = path.resolve()
        if not real.is_dir() or any(real.is_relative_to(v) for v in visible):
            continue
        args += _parents(real, made) + ["--ro-bind", str(real), str(real)]
        visible.append(real)
    for path in runtime_paths:
        spelled = Path(os.path.abspath(path))
        if spelled != spelled.resolve() and not any(spelled.is_relative_to(v) for v in visible):
            args += _parents(spelled, made) + ["--symlink", str(spelled.resolve()), str(spelled)]
    return args


def _parents(path: Path, made: set[Path]) -> list[str]:
    """`--perms 0755 --dir` for each missing parent of a mount point, shallowest first."""
    args: list[str] = []
    for parent in reversed(path.parents):
        if parent not in made:
            args += ["--perms", "0755", "--dir", str(parent)]
            made.add(parent)
    return args


def _masks(hidden: list[Path], visible: list[Path]) -> list[str]:
    """Cover each hidden path that lies inside a visible one with an empty tmpfs."""
    args: list[str] = []
    for path in sorted({p.resolve() for p in hidden if p.exists()}):
        if any(path.is_relative_to(v) for v in visible):
            args += ["--tmpfs", str(path)]
    return args
