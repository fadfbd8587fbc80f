"""A query's kernel: the model's code run cell by cell in one persistent interpreter, in a sandbox of its own.

An LLM agent's code steps share state as in a notebook: variables, imports and loaded frames stay
from one cell to the next, files in `work/` too. Each query gets a fresh warm sandbox
(`warm.WarmPool`, the allowlist, namespaces, seccomp filter, privilege drop and cgroup of a cold
run) that is never lent to another query and is closed at the query's end; its zygote forks the
kernel (`cells.py`), so a cell costs a pipe round trip instead of a new sandbox and interpreter.

A cell runs under the query's limits: the address-space, file-size and CPU rlimits of a run on
the kernel (its CPU total is the kernel's, as a notebook's), the sandbox's memory, process and
disk totals, and its own wall clock. A cell that outlives its wall clock or ends the kernel has
the kernel restarted (variables lost, files kept) and says so. What a cell printed is kept as its
first and last `cap` bytes per stream. Why not `jupyter_client` and `ipykernel`: starting an
ipykernel costs ~0.4 CPU-seconds (IPython, tornado, zmq), the latency-bound evaluation's whole
budget per query on two cores, and a ZMQ kernel cannot be forked from a warm zygote (docs/agents.md).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from stages.sandbox import SIGNAL_LIMITS, Limits, filesystem, harvest_work
from stages.sandbox.untrusted import Collected
from stages.sandbox.warm import PoolDied, PoolSpec, WarmPool

START_SECONDS = 30.0
# The zygote's share of the sandbox's memory total above the query's own: an interpreter and what it
# preloads, shared copy-on-write with the kernel (a warm pool for annotators allows it 1 GiB).
ZYGOTE_BYTES = 192 << 20


@dataclass(frozen=True)
class CellResult:
    """How one cell ended: as a run of `python` on it would, plus whether the kernel was restarted."""

    exit_code: int | None  # None: killed (its wall clock, a signal)
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool
    restarted: bool  # the kernel was started again: variables and imports are gone, files stay
    limits_hit: tuple[str, ...] = ()


class KernelDied(RuntimeError):
    """The query's sandbox itself ended (its zygote killed); the query cannot go on."""


class Kernel:
    """One query's kernel; use as a context manager, or `close()` it."""

    def __init__(self, limits: Limits, prompt: str, public_dir: Path, *, hidden: Sequence[Path] = (),
                 env: dict[str, str] | None = None, preload: Sequence[str] = (),
                 binds: Sequence[tuple[Path, str]] = ()):
        self.limits = limits
        self.pool = WarmPool(PoolSpec(limits, tuple(hidden), tuple(preload), tuple(binds), ZYGOTE_BYTES))
        self.cells = 0
        try:
            self.pool.stage(prompt, public_dir, None)
            self._command({"kernel": 1, "env": self.pool.run_environment(env), "cpu": limits.cpu_seconds,
                           "memory": limits.address_space_bytes, "file_size": limits.file_size_bytes},
                          START_SECONDS)
        except BaseException:
            self.pool.close()
            raise

    def __enter__(self) -> Kernel:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def run(self, code: str, timeout: float, cap: int) -> CellResult:
        """Run one cell within `timeout` seconds; what it printed, up to `cap` bytes a stream."""
        self.cells += 1
        number, group = self.cells, self.pool.group
        events = group.events() if group else {}
        reply = self._command({"cell": number, "code": code, "wall": timeout}, timeout)
        root = f"/proc/{self.pool.sandbox_pid}/root/scratch"
        stdout, stderr = (_take(f"{root}/cell-{number}.{kind}", cap) for kind in ("out", "err"))
        hits = ["wall"] * bool(reply["timed_out"])
        if group:
            hits += [name for name, count in group.events().items() if count > events.get(name, 0)]
        status = reply["status"] if reply["signal"] is None else 128 + reply["signal"]
        if status in SIGNAL_LIMITS:
            hits.append(SIGNAL_LIMITS[status])
        return CellResult(None if reply["signal"] is not None else status, stdout, stderr, reply["seconds"],
                          bool(reply["timed_out"]), bool(reply["restarted"]), tuple(dict.fromkeys(hits)))

    def read_work(self, name: str, cap: int) -> Collected:
        """One file of `work/` as it is now, taken as untrusted input (the kernel goes on)."""
        return harvest_work(f"/proc/{self.pool.sandbox_pid}/root{filesystem.WORKSPACE}/work", [name], cap)[name]

    def hand_in(self, names: Sequence[str], cap: int) -> dict[str, Collected]:
        """End the kernel and take the named files of `work/` as untrusted input."""
        self._command({"end": 1}, START_SECONDS)
        return harvest_work(f"/proc/{self.pool.sandbox_pid}/root{filesystem.WORKSPACE}/work", names, cap)

    def close(self) -> None:
        """End the sandbox and all in it."""
        self.pool.close()

    def _command(self, order: dict, seconds: float) -> dict:
        try:
            return self.pool.command(order, seconds)
        except (OSError, PoolDied) as error:
            raise KernelDied(f"the query's sandbox ended: {error}") from error


def _take(path: str, cap: int) -> str:
    """The first and last `cap` bytes of one of a cell's output files, which is then removed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        size = os.fstat(fd).st_size if stat.S_ISREG(os.fstat(fd).st_mode) else 0
        head = os.pread(fd, cap, 0) if size else b""
        tail = os.pread(fd, cap, max(cap, size - cap)) if size > cap else b""
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
    cut = size - len(head) - len(tail)
    middle = f"\n[... {cut} bytes cut ...]\n" if cut > 0 else ""
    return head.decode(errors="replace") + middle + tail.decode(errors="replace")


# Kernels started beside the loops that will use them: a few threads, each waiting on a sandbox's
# interpreter to say it is ready (the sandboxes themselves are started one at a time by warm.py).
_STARTERS = ThreadPoolExecutor(8, thread_name_prefix="kernel-starter")


class StartingKernel:
    """A query's kernel whose sandbox starts in the background while its loop makes its first model call.

    The kernel is needed only when the model's first code runs, a model call later; until then its
    start (~40 ms of CPU, longer when a wave of queries starts at once) costs the query no time.
    Each method waits for the start; a start that failed raises `KernelDied` there, and `failed`
    says why, so that the run is an infrastructure error, not the model's.
    """

    def __init__(self, *args, **kwargs):
        self._future = _STARTERS.submit(Kernel, *args, **kwargs)

    @property
    def failed(self) -> str | None:
        """Why the kernel did not start (None: it started, or has not been needed yet and still may)."""
        error = self._future.exception()
        return None if error is None else f"the kernel did not start: {error}"

    def _kernel(self) -> Kernel:
        try:
            return self._future.result()
        except (KernelDied, PoolDied, OSError) as error:
            raise KernelDied(f"the kernel did not start: {error}") from error

    def run(self, code: str, timeout: float, cap: int) -> CellResult:
        """`Kernel.run`, once the kernel has started."""
        return self._kernel().run(code, timeout, cap)

    def read_work(self, name: str, cap: int) -> Collected:
        """`Kernel.read_work`, once the kernel has started."""
        return self._kernel().read_work(name, cap)

    def hand_in(self, names: Sequence[str], cap: int) -> dict[str, Collected]:
        """`Kernel.hand_in`, once the kernel has started."""
        return self._kernel().hand_in(names, cap)

    def close(self) -> None:
        """Close the kernel once its start is over (a failed start left nothing to close)."""
        if self._future.exception() is None:
            self._future.result().close()

    def __enter__(self) -> StartingKernel:
        return self

    def __exit__(self, *_) -> None:
        self.close()
