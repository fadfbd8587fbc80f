"""What the test_init_*.py modules share: the markers, the workspace, and descriptor and thread helpers."""

from __future__ import annotations

import os
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from stages import sandbox

# Forks children that sleep until a fork is refused; prints how many it made and the error.
FORK_UNTIL_REFUSED = textwrap.dedent("""
    import os, time
    count = 0
    try:
        while True:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            count += 1
    except OSError as error:
        print(count, error.strerror)
""")

PY = sys.executable
AS_ROOT = os.geteuid() == 0
needs_bwrap = pytest.mark.skipif(not sandbox.bwrap_available(), reason="bubblewrap is not installed")
needs_cgroup = pytest.mark.skipif(not AS_ROOT, reason="per-run cgroups are made for a root harness only")


def open_fds() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


def empty_workspace(root: Path) -> Path:
    """A workspace with an empty data/, a work/ and a prompt: what each module's `ws` fixture is."""
    (root / "data").mkdir(parents=True)
    (root / "work").mkdir()
    (root / "prompt.md").write_text("Report the mean of x.\n")
    return root


def in_thread(call, deadline: float = 30.0):
    """Run `call` in a thread for at most `deadline` seconds: the thread and a list with the result."""
    results = []
    thread = threading.Thread(target=lambda: results.append(call()), daemon=True)
    thread.start()
    thread.join(deadline)
    return thread, results
