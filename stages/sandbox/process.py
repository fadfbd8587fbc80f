"""Watch one running sandbox: bounded output, the launcher's reports, stops, and the harvest.

Everything a run produces is read as it comes, in bounded amounts: stdout and stderr into tails of
a fixed size (a program printing 400 MB costs the harness a few MB), the launcher's report pipe
(`x` when started, then `done <status>`), bwrap's `--info-fd` JSON (the host pid of the sandbox's
init). A run is stopped at the wall clock, at its CPU-time total or at its output cap: SIGTERM to
the launcher, which kills the rest and reports; SIGKILL to the namespace if it does not within
`STOP_GRACE_SECONDS`.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

OUTPUT_TAIL_BYTES = 20_000
STOP_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.2
_READ_BYTES = 1 << 16


class Tail:
    """The last `size` bytes of a stream and the count of all bytes seen."""

    def __init__(self, size: int = OUTPUT_TAIL_BYTES):
        self.size, self.total, self._buffer = size, 0, bytearray()

    def add(self, chunk: bytes) -> None:
        """Keep `chunk`'s end; memory stays under twice `size`."""
        self.total += len(chunk)
        self._buffer += chunk[-self.size:]
        if len(self._buffer) > 2 * self.size:
            del self._buffer[: -self.size]

    def text(self) -> str:
        """The tail, decoded (undecodable bytes replaced)."""
        return bytes(self._buffer[-self.size:]).decode(errors="replace")


@dataclass
class Watch:
    """The state of one run as the harness sees it."""

    started: bool = False
    done_status: int | None = None  # from the launcher's `done <status>`
    sandbox_pid: int | None = None  # host pid of the sandbox's init
    stop_reason: str | None = None  # wall | cpu | output
    stdout: Tail = field(default_factory=Tail)
    stderr: Tail = field(default_factory=Tail)
    report: bytearray = field(default_factory=bytearray)
    info: bytearray = field(default_factory=bytearray)


def watch(
    proc: subprocess.Popen[bytes],
    report_fd: int,
    info_fd: int | None,
    *,
    wall_seconds: float,
    output_bytes: int,
    over_cpu: Callable[[], bool],
    on_done: Callable[[Watch], None],
    stop: Callable[[Watch], None],
    force: Callable[[Watch], None],
) -> Watch:
    """Follow `proc` until it ends; call `on_done` once the launcher reports, `stop`/`force` to end it.

    Args:
        proc: The started command, with stdout and stderr pipes.
        report_fd: Read end of the launcher's report pipe.
        info_fd: Read end of bwrap's info pipe, or None unsandboxed.
        wall_seconds: Wall-clock limit.
        output_bytes: stdout + stderr total at which the run is stopped.
        over_cpu: Whether the run's CPU-time total has been passed.
        on_done: Called when the launcher reported `done` (the harvest), before `force`.
        stop: Asks the run to end (SIGTERM to the launcher).
        force: Ends the run now (SIGKILL).
    """
    state, start = Watch(), time.monotonic()
    selector = selectors.DefaultSelector()
    streams = {proc.stdout.fileno(): state.stdout.add, proc.stderr.fileno(): state.stderr.add,  # type: ignore[union-attr]
               report_fd: state.report.extend}
    if info_fd is not None:
        streams[info_fd] = state.info.extend
    for fd in streams:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    stop_deadline: float | None = None
    forced = False
    while selector.get_map():
        _pump(selector, streams, POLL_SECONDS)
        _parse(state)
        if state.done_status is not None and not forced:
            on_done(state)
            force(state)
            forced = True
        now = time.monotonic()
        if state.stop_reason is None:
            reason = ("wall" if now - start >= wall_seconds
                      else "output" if state.stdout.total + state.stderr.total > output_bytes
                      else "cpu" if over_cpu() else None)
            if reason is not None:
                state.stop_reason, stop_deadline = reason, now + STOP_GRACE_SECONDS
                stop(state)
        elif not forced and stop_deadline is not None and now >= stop_deadline:
            force(state)
            forced = True
        if forced and proc.poll() is not None:
            _drain_briefly(selector, streams)
            break
    selector.close()
    proc.wait()
    return state


def _parse(state: Watch) -> None:
    """Read the launcher's byte and `done` line, and bwrap's child pid, as they arrive."""
    if state.report[:1] == b"x":
        state.started = True
        line = bytes(state.report[1:])
        if line.endswith(b"\n") and line.startswith(b"done "):
            with contextlib.suppress(ValueError):
                state.done_status = int(line[5:].strip())
    if state.sandbox_pid is None and state.info.rstrip().endswith(b"}"):
        with contextlib.suppress(ValueError):
            pid = json.loads(bytes(state.info)).get("child-pid")
            state.sandbox_pid = pid if isinstance(pid, int) and pid > 1 else None


def _drain_briefly(selector: selectors.BaseSelector, streams: dict) -> None:
    """Take what is still buffered in the pipes, without waiting on a writer that lingers."""
    deadline = time.monotonic() + 1.0
    while selector.get_map() and time.monotonic() < deadline:
        _pump(selector, streams, 0.05)


def _pump(selector: selectors.BaseSelector, streams: dict, timeout: float) -> None:
    """One wait on the pipes: hand each chunk read to its stream; forget a pipe at its end."""
    for key, _ in selector.select(timeout):
        try:
            chunk = os.read(key.fd, _READ_BYTES)
        except BlockingIOError:
            continue
        if chunk:
            streams[key.fd](chunk)
        else:
            selector.unregister(key.fd)


def children_of(pid: int) -> list[int]:
    """The pids whose parent is `pid`, read from /proc/*/stat."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            # Kept out of `make mutation`: inverted, this test names every other process on the host
            # for the stop to SIGTERM, which a mutant run as root then does.
            if parent == pid:  # pragma: no mutate
                found.append(int(stat.parent.name))
    return sorted(found)


def signal_quietly(pid: int | None, sig: int) -> None:
    """Send `sig` to `pid`, ignoring a process that is already gone."""
    if pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the command's process group (bwrap, or the unsandboxed program's session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
