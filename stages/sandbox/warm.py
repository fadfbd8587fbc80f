"""Warm sandboxes: the annotator scripts pay the interpreter and the scientific stack once per worker.

A cold run (`run_sandboxed`) starts bwrap and a fresh interpreter, which imports pandas,
scikit-learn and SciPy again: ~1.7 s of a 2-8 s annotator run. A `WarmPool` is one long-lived
sandbox per worker, built by the same allowlist, namespaces, seccomp filter, privilege drop and
cgroup as a cold run, whose program is `zygote.py`: it imports the stack once and forks one child
per run. For each run the harness links that run's files alone (its prompt, public `data/` and the
annotator's `agent/` folder) into the host folder it binds read-only at `/pool`, emptied of the
last run's first; the child sees the paths a cold run sees (`/workspace` with `prompt.md`,
`data/` and an empty tmpfs `work/`, the script at `/agent/<script>`), works under the run's
rlimits and wall clock, and exits like `python /agent/<script>`. The harness takes the run's files
out of `work/` as untrusted input exactly as from a cold run; the zygote kills whatever the run
left and empties `/workspace`, `/tmp` and `/dev/shm` before the next one. So each run sees only
its own query's files and no private path, the verify run is a separate process in a fresh
workspace, tracebacks and warnings name the paths a cold run's do, and a run that crashes, hangs
or exhausts memory ends alone (the OOM killer takes the child first; a pool whose zygote dies is
replaced, and the run is done again cold).

For the project's own trusted scripts only (annotators): an untrusted agent keeps a fresh sandbox
per query. What is imported is what the scripts import (`pools.imports_of`); `pools` leases them.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import select
import shutil
import site
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from stages.sandbox import (
    SIGNAL_LIMITS,
    Limits,
    RunResult,
    _close,
    _memfd,
    cgroups,
    command,
    debris,
    filesystem,
    harvest_work,
    process,
    seccomp,
)
from stages.sandbox.workspace import link_tree

log = logging.getLogger(__name__)

ZYGOTE = Path(__file__).with_name("zygote.py")
CELLS = Path(__file__).with_name("cells.py")  # a query's kernel (kernel.py), beside the zygote
ENVIRONMENT = json.dumps({"prefix": sys.prefix, "exec_prefix": sys.exec_prefix,  # the zygote enters it itself
                          "site_packages": site.getsitepackages()})
READY_SECONDS = 120.0  # importing the stack on a loaded machine
REPLY_GRACE_SECONDS = 30.0  # past the run's wall clock, before the pool counts as dead
ZYGOTE_MEMORY_BYTES = 1 << 30  # the zygote's own share of the pool's cgroup, above the run's total
OUTPUT_TAIL_BYTES = process.OUTPUT_TAIL_BYTES
# bwrap's --die-with-parent ties a sandbox to the *thread* that started it: a pool started by a
# worker thread would be killed when that thread ends (an executor's shutdown), though the pool
# outlives it. Every pool is started by this one thread, which lives as long as the process.
_STARTER = ThreadPoolExecutor(1, thread_name_prefix="warm-pool-starter")


@dataclass(frozen=True)
class PoolSpec:
    """What makes pools interchangeable: limits, hidden paths, preloaded modules and extra binds.

    `binds` are a cold run's `extra_ro_binds` (host folder, top-level path inside), in order.
    """

    limits: Limits
    hidden: tuple[Path, ...]
    preload: tuple[str, ...]
    binds: tuple[tuple[Path, str], ...] = ()
    zygote_bytes: int = ZYGOTE_MEMORY_BYTES  # the zygote's own share of the cgroup, above the runs' total


class PoolDied(RuntimeError):
    """The zygote did not answer (crashed, killed, or never ready); the pool is unusable."""


class WarmPool:
    """One warm sandbox, used by one thread at a time."""

    def __init__(self, spec: PoolSpec):
        debris.start_harness()  # as for any sandbox: sweep what dead harnesses left, end ours on a stop signal
        if debris.stopping():  # a stopped harness starts no sandbox (the run is refused cold, as an infra error)
            raise PoolDied("the harness was stopped by a signal")
        self.spec = spec
        self._runs = itertools.count()
        self.folder = Path(tempfile.mkdtemp(prefix=debris.temp_prefix("pool")))
        self.exchange = self.folder / "runs"  # bound at /pool; the zygote's log stays outside it
        self.exchange.mkdir()
        self.group = None
        self.proc: subprocess.Popen | None = None
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        limits, identity = self.spec.limits, command.sandbox_identity()
        if identity.as_root:  # the sandbox user may enter it, no other host user
            for folder in (self.folder, self.exchange):
                os.chown(folder, 0, identity.gid)
                folder.chmod(0o750)
        runtime = filesystem.python_runtime_paths()
        if identity.as_root:
            self.group = cgroups.create(cgroups.Totals(limits.memory_bytes + self.spec.zygote_bytes,
                                                       limits.processes, limits.cpu_cores, float("inf")))
        commands_r, self._commands = os.pipe()
        self._replies, replies_w = os.pipe()
        info_r, info_w = os.pipe()
        fds = {name: _memfd(name, text.encode())
               for name, text in filesystem.etc_files(identity.uid, identity.gid).items()}
        seccomp_fd, zygote_fd = _memfd("seccomp", seccomp.filter_program()), _memfd("zygote", ZYGOTE.read_bytes())
        cells_fd = _memfd("cells", CELLS.read_bytes())
        sizes = filesystem.Sizes(limits.work_bytes, limits.tmp_bytes, limits.shm_bytes)
        env = command.environment(runtime, "/scratch", None)
        bwrap = ["bwrap", *filesystem.base_mounts(runtime, list(self.spec.hidden), sizes, fds),
                 "--perms", "0755", "--dir", "/warm", "--perms", "0644", "--ro-bind-data", str(zygote_fd),
                 "/warm/zygote.py", "--perms", "0644", "--ro-bind-data", str(cells_fd), "/warm/cells.py",
                 "--ro-bind", str(self.exchange), "/pool", "--symlink", "/pool/agent", "/agent",
                 *filesystem.extra_binds(dict(self.spec.binds), runtime),
                 "--perms", "1777", "--size", str(limits.work_bytes), "--tmpfs", filesystem.WORKSPACE,
                 "--perms", "1777", "--size", str(limits.output_bytes), "--tmpfs", "/scratch",
                 "--remount-ro", "/", *command.namespace_args(identity, seccomp_fd, info_w),
                 "--chdir", "/scratch", "--clearenv",
                 *[a for key, value in env.items() for a in ("--setenv", key, value)],
                 "--", *command.privilege_drop(identity), sys.executable, "-S", "/warm/zygote.py",
                 str(commands_r), str(replies_w), json.dumps(list(self.spec.preload)), ENVIRONMENT]
        prefix = command.enter_cgroups(self.group.procs_files if self.group else []) + command.rlimit_prefix(
            10**7, limits.address_space_bytes + self.spec.zygote_bytes, limits.file_size_bytes,
            None if self.group else limits.processes)
        log_file = open(self.folder / "zygote.log", "wb")  # noqa: SIM115 - closed below, kept by the child
        passed = (commands_r, replies_w, info_w, seccomp_fd, zygote_fd, cells_fd, *fds.values())
        try:
            self.proc = _STARTER.submit(subprocess.Popen, prefix + bwrap, stdin=subprocess.DEVNULL,
                                        stdout=log_file, stderr=log_file, start_new_session=True,
                                        env=command.launcher_environment(),
                                        pass_fds=passed).result()
        finally:
            log_file.close()
            _close(*passed)
        debris.track(self.proc)
        self.sandbox_pid = _sandbox_pid(info_r, READY_SECONDS)
        hello = self._reply(READY_SECONDS)
        if not hello.get("ready"):
            raise PoolDied(f"the zygote did not start: {hello}")
        self.preloaded, self.failed = hello["preloaded"], hello["failed"]

    def _reply(self, seconds: float) -> dict:
        """The zygote's next JSON line, or `PoolDied` after `seconds` or at its end."""
        line, deadline = b"", time.monotonic() + seconds
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not _readable(self._replies, left):
                raise PoolDied(f"the zygote gave no answer in {seconds:.0f} s; its log: {self.log_tail()}")
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                raise PoolDied(f"the zygote ended; its log: {self.log_tail()}")
            line += chunk
        return json.loads(line)

    def stage(self, prompt: str, public_dir: Path, agent_dir: Path | None) -> int:
        """Link the next run's files alone into `/pool` (the last run's go first); the run's number."""
        if debris.stopping():
            raise PoolDied("the harness was stopped by a signal")
        folder = self.exchange
        for entry in folder.iterdir():  # the last run's files (the zygote has ended that run)
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        (folder / "prompt.md").write_text(prompt)
        (folder / "data").mkdir()
        link_tree(public_dir, folder / "data")
        if agent_dir is not None:
            link_tree(agent_dir, folder / "agent")
        return next(self._runs)

    def command(self, order: dict, seconds: float) -> dict:
        """Send the zygote one command; its reply within `seconds` and a grace, or `PoolDied`."""
        os.write(self._commands, (json.dumps(order) + "\n").encode())
        return self._reply(seconds + REPLY_GRACE_SECONDS)

    def run_environment(self, extra_env: dict | None) -> dict:
        """The environment of a run or kernel, as a cold run's (HOME in `work/`)."""
        return command.environment(filesystem.python_runtime_paths(), f"{filesystem.WORKSPACE}/work", extra_env)

    def alive(self) -> bool:
        """Whether the sandbox still runs (it may have been killed while idle)."""
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self) -> str:
        """The end of the zygote's own stdout and stderr (not a run's)."""
        with contextlib.suppress(OSError):
            return (self.folder / "zygote.log").read_bytes()[-2000:].decode(errors="replace").strip()
        return ""

    def run(self, prompt: str, public_dir: Path, agent_dir: Path, script: str,
            collect_files: Sequence[str], collect_bytes: int, extra_env: dict | None = None,
            args: Sequence[str] = ()) -> RunResult:
        """Run `/agent/<script> <args>` on this query's files; the result as `run_sandboxed` gives it."""
        n = self.stage(prompt, public_dir, agent_dir)
        limits, events = self.spec.limits, self.group.events() if self.group else {}
        env = self.run_environment(extra_env)
        order = {"run": n, "script": f"{filesystem.AGENT_MOUNT}/{script}", "args": list(args), "env": env,
                 "wall": limits.wall_seconds,
                 "cpu": limits.cpu_seconds, "memory": limits.address_space_bytes,
                 "file_size": limits.file_size_bytes}
        started = time.monotonic()
        try:
            reply = self.command(order, limits.wall_seconds)
            root = f"/proc/{self.sandbox_pid}/root"
            files = harvest_work(f"{root}{filesystem.WORKSPACE}/work", collect_files, collect_bytes)
            stdout, stderr = _tail(f"{root}/scratch", "stdout"), _tail(f"{root}/scratch", "stderr")
        except (OSError, PoolDied) as error:
            raise PoolDied(f"{error}; the zygote's log: {self.log_tail()}") from error
        hits = ["wall"] * reply["timed_out"]
        if self.group:
            hits += [name for name, count in self.group.events().items() if count > events.get(name, 0)]
        status = reply["status"] if reply["signal"] is None else 128 + reply["signal"]
        if status in SIGNAL_LIMITS:
            hits.append(SIGNAL_LIMITS[status])
        isolation = "warm bwrap pool, uid {}, {}".format(
            command.sandbox_identity().uid, f"cgroup v{self.group.version}" if self.group else "no cgroup")
        stopped = "the harness was stopped by a signal during the run" if debris.stopping() else None
        return RunResult(None if reply["timed_out"] else status, reply["timed_out"],
                         time.monotonic() - started, stdout, stderr, stopped, tuple(dict.fromkeys(hits)),
                         files, isolation)

    def close(self) -> None:
        """End the sandbox and remove its folder and cgroup."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, 9)
            self.proc.wait()
            debris.untrack(self.proc)
            self.proc = None
        for name in ("_commands", "_replies"):
            if hasattr(self, name):
                _close(getattr(self, name))
                delattr(self, name)
        if self.group is not None:
            self.group.remove()
            self.group = None
        shutil.rmtree(self.folder, ignore_errors=True)


def _tail(root: str, name: str) -> str:
    """The last bytes of one of the run's output files (a regular file, not followed if a link)."""
    try:
        fd = os.open(f"{root}/{name}", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return ""
        os.lseek(fd, max(0, info.st_size - OUTPUT_TAIL_BYTES), os.SEEK_SET)
        return os.read(fd, OUTPUT_TAIL_BYTES).decode(errors="replace")
    finally:
        os.close(fd)


def _readable(fd: int, seconds: float) -> bool:
    """Whether `fd` has data (or its end) within `seconds`.

    `poll`, not `select`: a harness holding many kernels has descriptors past select's 1024.
    """
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(seconds * 1000))


def _sandbox_pid(fd: int, seconds: float) -> int:
    """The host pid of the sandbox's init, from bwrap's info fd (JSON), within `seconds`."""
    data, deadline = b"", time.monotonic() + seconds
    try:
        while not data.rstrip().endswith(b"}"):
            left = deadline - time.monotonic()
            if left <= 0 or not _readable(fd, left):
                raise PoolDied("bwrap reported no sandbox pid")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise PoolDied("bwrap ended before it reported the sandbox pid")
            data += chunk
        return int(json.loads(data)["child-pid"])
    finally:
        os.close(fd)
