"""Read an agent's file in a forked child process under a memory bound; the harness gets a frame back.

Why a child: the footer checks of `stages.scoring.query.artifacts` bound what a file declares, not what
decoding it costs. A dictionary column of one long string repeated over many rows, or a page
header whose `uncompressed_page_size` claims gigabytes, passes a footer check in a file of a few
kilobytes and then makes the decoder allocate gigabytes; a zstd page of zeros within the declared
size cap still costs several times that cap once decoded and converted. Proving a bound on
pyarrow's decoder and pandas' conversions for every such file is not possible from here (Arrow's
memory pools have no cap), so the bound is the kernel's: the read runs in a child whose address
space (`RLIMIT_AS`) may grow by at most `Bounds.memory_bytes` beyond what it inherited; past that
every allocation fails.

Why fork: the child inherits the imported pyarrow and pandas and the arguments (the bytes, the
required rows) without pickling or importing anything; what it costs is the fork, the pages it
copies on write and its exit: tens of milliseconds of CPU per file, against a second or more to
start a fresh interpreter. The child reads single-threaded (no Arrow pool, no pre-buffering, one
thread to build the IPC stream), so that no thread of the parent is needed after the fork (fork
copies only the calling thread; the construct flow grades from a thread pool) and no thread stack
or allocator arena of its own counts against the bound. Should a child hang all the same (a lock
another thread held at the fork), `Bounds.seconds` ends it.

What comes back: the frame the reader built (required rows only, normalised), as an Arrow IPC
stream through a pipe the parent reads up to `Bounds.result_bytes`. IPC is data: nothing from a
process that parsed hostile bytes is unpickled by the harness.

Outcomes: the reader's own problem type (`ArtifactError`, `CheckpointError`) keeps its message; a
child that hits the memory bound (a `MemoryError` anywhere in its error's chain), dies by a signal,
exits without a frame, runs past `Bounds.seconds` or sends more than `Bounds.result_bytes` is that
same problem type with a stated message, so it is scored like any unreadable file. An exception of
the reader that is neither (a bug of the harness) is a `RuntimeError` with the child's traceback:
never scored. A failing `fork` raises `OSError` (the harness's fault, not the file's).

The bound is on address space, which is stricter than memory: the allocator (mimalloc) reserves
address space in 1 GiB arenas, and a reservation made in the child counts against the bound. The
default of 2 GiB therefore leaves at least 1 GiB for the read; an honest artifact needs far less
(about 50 MiB for 245,000 required rows, 250 MiB with the 1,000,000 extra rows a file may hold).
The parent allocates at most the pipe's bytes and the frame made of them (`result_bytes`, 64 MiB:
an honest frame of 245,000 rows is about 7.5 MiB). Pages the child copies on write from the parent
are not counted; they are at most the parent's resident memory.
"""

from __future__ import annotations

import gc
import os
import resource
import selectors
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
from threadpoolctl import threadpool_limits

# A fork from one thread while another is inside a multi-threaded OpenBLAS call leaves that call
# spinning for ever: OpenBLAS's fork handlers stop its thread pool under it. Seen in the construct
# flow, whose label threads read artifacts here while its main thread fits reference models: the
# flow hung in `exec_blas` for ten minutes, deaf to SIGTERM. A process that reads here therefore
# keeps BLAS single-threaded: the variables for libraries loaded later, threadpoolctl for those
# loaded already (numpy, through pandas).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"
threadpool_limits(1)

MEMORY_BYTES = 2 << 30
SECONDS = 60.0
RESULT_BYTES = 64 << 20
CHUNK = 1 << 20
FRAME, PROBLEM, MEMORY, BUG = b"F", b"P", b"M", b"B"  # the first byte the child sends: what follows


@dataclass(frozen=True)
class Bounds:
    """What reading one file may cost: address space beyond the parent's, wall time, bytes sent back."""

    memory_bytes: int = MEMORY_BYTES
    seconds: float = SECONDS
    result_bytes: int = RESULT_BYTES


BOUNDS = Bounds()


def address_space() -> int:
    """Bytes of this process's address space (Linux: the first field of /proc/self/statm, in pages)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _from_memory(error: BaseException | None) -> bool:
    """Whether a MemoryError is in the error's chain (readers re-raise decoder errors as their own)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, MemoryError):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _ipc(frame: pd.DataFrame) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    table = pa.Table.from_pandas(frame, nthreads=1)
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _text(error: BaseException) -> bytes:
    return str(error).encode(errors="replace")


def _write_all(fd: int, data: bytes | pa.Buffer) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def outcome(read: Callable[[], pd.DataFrame], problem: type[Exception]) -> tuple[bytes, bytes | pa.Buffer]:
    """What the child sends: a kind (`FRAME`, `PROBLEM`, `MEMORY`, `BUG`) and its payload.

    The payload is the frame as an Arrow IPC stream, the problem's message, nothing, or the
    traceback of the harness's own bug.
    """
    try:
        return FRAME, _ipc(read())
    except MemoryError:
        return MEMORY, b""
    except problem as error:
        return (MEMORY, b"") if _from_memory(error) else (PROBLEM, _text(error))
    except BaseException:  # noqa: BLE001 - reported to the parent as the harness's own bug
        return BUG, traceback.format_exc().encode(errors="replace")


def _child(read: Callable[[], pd.DataFrame], problem: type[Exception], memory_bytes: int, fd: int) -> None:
    """Run `read` under the bound and send what came of it; never returns."""
    code = 1
    try:
        gc.freeze()  # a collection in the child would write to every inherited object: copies of their pages
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = address_space() + memory_bytes
        limit = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        kind, payload = outcome(read, problem)
        _write_all(fd, kind)
        _write_all(fd, payload)
        code = 0
    finally:
        os._exit(code)


def _collect(fd: int, bounds: Bounds) -> tuple[bytearray, str | None]:
    """The child's bytes until it closes the pipe, or why reading stopped early."""
    received = bytearray()
    deadline = time.monotonic() + bounds.seconds
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                return received, f"reading it took longer than {bounds.seconds:g} s"
            chunk = os.read(fd, CHUNK)
            if not chunk:
                return received, None
            received += chunk
            if len(received) > bounds.result_bytes + 1:
                return received, f"the rows read from it take more than {bounds.result_bytes} bytes"


def _death(status: int) -> str | None:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"its reader died ({signal.Signals(number).name})"
        except ValueError:
            return f"its reader died (signal {number})"
    if os.WEXITSTATUS(status) != 0:
        return f"its reader exited with code {os.WEXITSTATUS(status)}"
    return None


def read_confined(read: Callable[[], pd.DataFrame], name: str, problem: type[Exception],
                  bounds: Bounds = BOUNDS) -> pd.DataFrame:
    """The frame `read()` returns, computed in a forked child under `bounds`; a first overrun of the time is retried.

    See `read_once` for the arguments and errors.
    """
    try:
        return read_once(read, name, problem, bounds)
    except _Overran:
        try:
            return read_once(read, name, problem, bounds)
        except _Overran as overran:
            raise problem(str(overran)) from None


class _Overran(Exception):
    """The child ran past `Bounds.seconds`: a hung fork or a slow file, told apart by a second try."""


def read_once(read: Callable[[], pd.DataFrame], name: str, problem: type[Exception],
              bounds: Bounds = BOUNDS) -> pd.DataFrame:
    """The frame `read()` returns, computed in a forked child under `bounds` (see the module docstring).

    Args:
        read: Reads the file (its bytes are in the closure) and returns a small frame; raises
            `problem` when the file is the problem.
        name: The file's name, the start of every stated problem.
        problem: The reader's error type, raised here with the child's message or a stated one.
        bounds: The memory, time and result bounds.

    Raises:
        problem: On any problem with the file, including the child exceeding a bound or dying.
        RuntimeError: When the reader failed otherwise (a bug of the harness, never scored).
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(read, problem, bounds.memory_bytes, write_fd)
    os.close(write_fd)
    stopped: str | None = "interrupted"  # killed and reaped whatever stops the collection
    try:
        received, stopped = _collect(read_fd, bounds)
    finally:
        os.close(read_fd)
        if stopped is not None:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if stopped is not None and stopped.startswith("reading it took longer"):
        raise _Overran(f"{name}: {stopped}")
    failure = stopped or _death(status)
    if failure is None and not received:
        failure = "its reader sent nothing"
    if failure is not None:
        raise problem(f"{name}: {failure}")
    kind, payload = bytes(received[:1]), memoryview(received)[1:]
    if kind == MEMORY:
        raise problem(f"{name}: reading it needs more than {bounds.memory_bytes} bytes of memory")
    if kind == PROBLEM:
        raise problem(bytes(payload).decode(errors="replace"))
    if kind == BUG:
        raise RuntimeError(f"reading {name} failed in the harness's code:\n"
                           f"{bytes(payload).decode(errors='replace')}")
    return pa.ipc.open_stream(pa.py_buffer(payload)).read_all().to_pandas()
