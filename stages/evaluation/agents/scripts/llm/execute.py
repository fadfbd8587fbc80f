"""Run the model's code in the workspace, and read back what it handed in.

Each run is a fresh `python -` process (the code on its stdin) with cwd `/workspace`: files in
`work/` persist between runs, Python variables do not. It runs in a session of its own, is killed
with its process group at its timeout, and only the first and last `cap` characters of stdout and
stderr are kept (a program printing gigabytes costs the loop a few kB).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ANSWER = Path("work/answer.json")
MAX_ANSWER_BYTES = 1 << 20
KEPT_ENV = ("PATH", "HOME", "LANG", "MPLCONFIGDIR", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
            "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE")


@dataclass(frozen=True)
class Ran:
    """One run of the model's code."""

    exit_code: int | None  # None: killed at its timeout
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        """Whether it ran to exit code 0."""
        return self.exit_code == 0


class _Capture(threading.Thread):
    """Reads a pipe to its end, keeping the first and last `cap` bytes and the count cut between."""

    def __init__(self, stream, cap: int):
        super().__init__(daemon=True)
        self.stream, self.cap = stream, cap
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def run(self) -> None:
        for chunk in iter(lambda: self.stream.read(1 << 16), b""):
            self.total += len(chunk)
            room = self.cap - len(self.head)
            self.head += chunk[:max(room, 0)]
            self.tail = (self.tail + chunk[max(room, 0):])[-self.cap:]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {cut} bytes cut ...]\n" if cut > 0 else ""
        return self.head.decode(errors="replace") + middle + self.tail.decode(errors="replace")


def run_code(code: str, timeout: float, cap: int) -> Ran:
    """Run `code` with Python in the current directory; kill it at `timeout` seconds."""
    env = {key: os.environ[key] for key in KEPT_ENV if key in os.environ}
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, start_new_session=True)
    readers = [_Capture(process.stdout, cap), _Capture(process.stderr, cap)]
    for reader in readers:
        reader.start()
    try:
        process.stdin.write(code.encode(errors="replace"))
        process.stdin.close()
    except BrokenPipeError:
        pass
    try:
        exit_code: int | None = process.wait(timeout=max(timeout, 0.1))
    except subprocess.TimeoutExpired:
        exit_code = None
    try:
        os.killpg(process.pid, signal.SIGKILL)  # its children too, whether or not it ended
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()
    for reader in readers:
        reader.join(timeout=2)
    return Ran(exit_code, readers[0].text(), readers[1].text(), round(time.monotonic() - started, 3))


def describe(ran: Ran, timeout: float, chars: int) -> str:
    """What the model reads about a run, at most about `chars` characters."""
    status = f"exit code {ran.exit_code}" if ran.exit_code is not None else f"killed after {timeout:.0f} s"
    text = f"{status} ({ran.seconds:.1f} s)\nstdout:\n{ran.stdout}\nstderr:\n{ran.stderr}"
    return shorten(text, chars)


def shorten(text: str, chars: int) -> str:
    """`text`, or its first and last `chars / 2` characters with a marker between."""
    if len(text) <= chars:
        return text
    half = chars // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def answer_problem() -> str | None:
    """Why `work/answer.json` cannot be handed in as it is, or None when it is a JSON object."""
    try:
        with open(ANSWER, "rb") as handle:
            data = handle.read(MAX_ANSWER_BYTES + 1)
    except OSError as error:
        return f"work/answer.json cannot be read: {error.strerror}"
    if len(data) > MAX_ANSWER_BYTES:
        return f"work/answer.json is over {MAX_ANSWER_BYTES} bytes"
    try:
        answer = json.loads(data)
    except ValueError as error:
        return f"work/answer.json is not valid JSON: {error}"
    return None if isinstance(answer, dict) else "work/answer.json is not a JSON object"
