"""Local TCP ports: a free one, who listens on one, whether a Prefect server answers on one.

Standard library only (Linux /proc), so that the Makefile can ask before the virtualenv exists
(flows/ui.py); benchmarks/runs.py and the flows' temporary server (flows/temporary_server.py) use it too.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A port that was free a moment ago (the caller must still check that it got it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening_pids(port: int) -> set[int]:
    """The pids holding a listening TCP socket on `port` (Linux /proc; other users' when readable)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                    inodes.add(f"socket:[{fields[9]}]")
    pids = set()
    for process in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):  # a process that ends meanwhile, or another user's
            if any(os.readlink(fd) in inodes for fd in process.joinpath("fd").iterdir()):
                pids.add(int(process.name))
    return pids


def listening(port: int) -> bool:
    """Whether anything accepts TCP connections on 127.0.0.1:`port`."""
    with socket.socket() as probe:
        probe.settimeout(2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def healthy(url: str, timeout: float = 2) -> bool:
    """Whether `url`/api/health answers (`url` is a server's root, without /api)."""
    try:
        with urllib.request.urlopen(f"{url}/api/health", timeout=timeout):
            return True
    except (OSError, http.client.HTTPException):  # refused, timed out, or cut short by a server starting up
        return False
