"""A kernel inside a warm sandbox: one interpreter per query that runs the model's code cell by cell.

This file runs *inside* the sandbox, beside `zygote.py` (it is bound at `/warm/cells.py`) and
imports nothing of the project; it works with the zygote's own helpers, handed to it as
`zygote`. The zygote's commands for a kernel, one JSON line each way:

    {"kernel": n, "env": {...}, "cpu": s, "memory": bytes, "file_size": bytes}
        -> {"kernel": n, "ready": true}
    {"cell": k, "code": "...", "wall": s}
        -> {"cell": k, "status": <exit status or null>, "signal": <signal or null>,
            "timed_out": bool, "restarted": bool, "seconds": s}
    {"end": n} -> {"end": n}

The kernel is forked from the zygote like a run (its own session, the run's rlimits, the OOM
killer's first choice, cwd `/workspace` with `work/` kept across cells) and then reads cells from a
pipe: each is compiled as `<cell k>` and executed in one namespace that persists, as in a notebook,
its stdout and stderr going to `/scratch/cell-k.out` and `.err`. A cell's status is what `python`
would exit with on it: 0, the code of a `SystemExit`, or 1 after an uncaught exception, whose
traceback starts at the cell. A cell that outlives its wall clock, or that ends the kernel
(`os._exit`, a signal, the OOM killer), has every process of the sandbox killed and a fresh kernel
started: variables and imports are gone, files in `work/` stay, and the reply says `restarted`.

Everything the kernel writes to the zygote is untrusted (the model's code runs in that process):
a reply line that is not the expected JSON, or comes for another cell, counts as a broken kernel.
"""

import json
import linecache
import os
import select
import sys
import time
import traceback

MAX_CODE_BYTES = 1 << 20  # one cell's source
MAX_DONE_BYTES = 4096  # the kernel's reply line


def kernel(zygote, command: dict, closing: list[int], cells: int, done: int) -> None:
    """The forked kernel: runs each cell it is sent until its pipe closes; never returns."""
    try:
        zygote.enter(command, closing)
        sys.argv, sys.path[0] = [""], ""  # as `python -c`: the working directory first
        namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        for line in os.fdopen(cells, "r", encoding="utf-8"):
            cell = json.loads(line)
            number = cell["cell"]
            zygote.redirect(f"cell-{number}.out", f"cell-{number}.err")
            status = run_cell(zygote, cell["code"], number, namespace)
            sys.stdout.flush()
            sys.stderr.flush()
            os.write(done, (json.dumps({"cell": number, "status": status}) + "\n").encode())
    finally:
        os._exit(0)


def run_cell(zygote, code: str, number: int, namespace: dict) -> int:
    """Execute one cell in `namespace`; its exit status as `python` would give it."""
    name = f"<cell {number}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)  # source lines in tracebacks
    try:
        exec(compile(code, name, "exec"), namespace)  # noqa: S102 - the model's code, in its sandbox
        return 0
    except SystemExit as exit_:
        return zygote.exit_status(exit_)
    except SyntaxError as error:  # no frame of the cell: the error alone, as the interpreter shows it
        traceback.print_exception(type(error), error, None)
        return 1
    except BaseException as error:  # noqa: BLE001 - reported as the interpreter reports it
        return zygote.report(error, name)


class Supervisor:
    """The zygote's side of one kernel: start it, hand it cells, restart it, end it."""

    def __init__(self, zygote, closing: list[int]):
        self.zygote, self.closing = zygote, closing
        self.command: dict | None = None
        self.pid = self.cells = self.done = None

    def start(self, command: dict) -> dict:
        """A fresh workspace and kernel for a query."""
        self.zygote.clear_before_run()
        self.zygote.prepare()
        self.command = command
        self._fork()
        return {"kernel": command["kernel"], "ready": True}

    def _fork(self) -> None:
        cells_r, cells_w = os.pipe()
        done_r, done_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            kernel(self.zygote, self.command, [*self.closing, cells_w, done_r], cells_r, done_w)
        os.close(cells_r)
        os.close(done_w)
        self.pid, self.cells, self.done = pid, cells_w, done_r

    def cell(self, order: dict) -> dict:
        """Run one cell within its wall clock; restart the kernel when it hung or died."""
        number, started = order["cell"], time.monotonic()
        deadline = started + order["wall"]
        code = order["code"].encode("utf-8", errors="replace")[:MAX_CODE_BYTES].decode("utf-8", errors="replace")
        line = (json.dumps({"cell": number, "code": code}) + "\n").encode()
        handle = os.pidfd_open(self.pid)
        try:
            sent = _write_all(self.cells, line, handle, deadline)
            reply = _read_line(self.done, handle, deadline) if sent else None
        finally:
            os.close(handle)
        if isinstance(reply, dict) and reply.get("cell") == number and isinstance(reply.get("status"), int):
            status, signal_, restarted, timed_out = reply["status"] & 0xFF, None, False, False
        else:
            timed_out = time.monotonic() >= deadline
            status, signal_ = self._restart()
            restarted = True
        return {"cell": number, "status": status, "signal": signal_, "timed_out": timed_out,
                "restarted": restarted, "seconds": round(time.monotonic() - started, 3)}

    def _restart(self) -> tuple[int | None, int | None]:
        """Kill the kernel and all it started, start a fresh one; the old kernel's (status, signal)."""
        status = self._kill()
        self._fork()
        return (os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                os.WTERMSIG(status) if os.WIFSIGNALED(status) else None)

    def _kill(self) -> int:
        self.zygote.kill_others()
        for fd in (self.cells, self.done):
            os.close(fd)
        _, status = os.waitpid(self.pid, 0)
        return status

    def end(self, order: dict) -> dict:
        """End the kernel and what it started; `work/` stays for the harvest."""
        if self.pid is not None:
            self._kill()
            self.pid = None
        return {"end": order["end"]}


def _write_all(fd: int, data: bytes, handle: int, deadline: float) -> bool:
    """Write `data` unless the kernel dies or the deadline passes first; whether all was written."""
    os.set_blocking(fd, False)
    view = memoryview(data)
    while view:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ended, writable, _ = select.select([handle], [fd], [], left)
        if ended:
            return False
        if not writable:
            continue
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            continue
        except BrokenPipeError:
            return False
    return True


def _read_line(fd: int, handle: int, deadline: float):
    """The kernel's reply line as JSON, or None when it died, hung, or wrote something else."""
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        readable, _, _ = select.select([fd, handle], [], [], left)
        if fd not in readable:
            if handle in readable:
                return None  # the kernel ended
            continue
        chunk = os.read(fd, MAX_DONE_BYTES)
        if not chunk:
            return None
        data += chunk
        if len(data) > MAX_DONE_BYTES:
            return None
    try:
        return json.loads(data)
    except ValueError:
        return None
