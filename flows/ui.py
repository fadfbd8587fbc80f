"""This checkout's Prefect server for `make ui`, `make run` and `make ui-stop`; never another's.

`make run` used to report to whatever answered on port 4200, such as the server of an earlier
checkout whose folder had been deleted (it answered 500). Now the server `make ui` starts records
its pid, its start time, its port and this checkout's path in `<cache>/prefect-ui.json`, and a
server counts as this checkout's only while that very process still holds the port and answers.
A server of anyone else on the port is named and left alone; this checkout's own starts on the
next free port.

    python3 -m flows.ui [--cache .cache] [--port 4200] url|start|stop

`url` prints this checkout's server's API URL (nothing when it is not up), `start` starts it
unless it is up, `stop` stops it and only it. Standard library only: the Makefile asks before
the virtualenv exists.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from stages.ports import healthy, listening, listening_pids

CHECKOUT = Path(__file__).resolve().parents[1]
RECORD = "prefect-ui.json"
STARTUP_SECONDS = 90
PORTS_TRIED = 20  # after the preferred one


def started_at(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc), or None if it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def read_record(cache: Path) -> dict | None:
    """The record `start` wrote, if any."""
    try:
        return json.loads((cache / RECORD).read_text())
    except (OSError, ValueError):
        return None


def is_ours(record: dict | None) -> bool:
    """Whether the recorded process is this checkout's and still the one serving on its port."""
    return (record is not None and record.get("checkout") == str(CHECKOUT)
            and started_at(record["pid"]) == record["started"]
            and record["pid"] in listening_pids(record["port"]) and healthy(base_url(record["port"])))


def base_url(port: int) -> str:
    """The server's root URL (the UI); the API is under /api."""
    return f"http://127.0.0.1:{port}"


def describe_port(port: int) -> str:
    """Who holds `port`, for a person: pids, command lines and working folders where readable."""
    holders = []
    for pid in sorted(listening_pids(port)):
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            holders.append(f"pid {pid}: `{command.strip()[:120]}`, started in {os.readlink(f'/proc/{pid}/cwd')}")
            continue
        holders.append(f"pid {pid} (another user's)")
    kind = "a Prefect server" if healthy(base_url(port)) else "a process that is not a Prefect server"
    return f"{kind} that is not this checkout's ({'; '.join(holders) or 'its process is not visible here'})"


def url(cache: Path) -> str:
    """This checkout's server's API URL, or '' when it is not up."""
    record = read_record(cache)
    return f"{base_url(record['port'])}/api" if is_ours(record) else ""


def start(cache: Path, port: int, log: Path) -> int:
    """Start this checkout's server (unless it is up) on `port` or the next free one; 0 when up."""
    record = read_record(cache)
    if is_ours(record):
        print(f"Prefect UI already running: {base_url(record['port'])}  (this checkout's server, pid {record['pid']})")
        return 0
    candidates = [candidate for candidate in range(port, port + PORTS_TRIED + 1) if not listening(candidate)]
    if port not in candidates:
        print(f"make ui: port {port} is held by {describe_port(port)}; it is not used.")
    prefect = shutil.which("prefect")
    if prefect is None:
        print("make ui: `prefect` is not on PATH (make install)")
        return 1
    cache.mkdir(parents=True, exist_ok=True)
    for candidate in candidates[:3]:  # a port taken between the probe and the server's bind: the next
        if (record := launch(prefect, candidate, log)) is not None:
            (cache / RECORD).write_text(json.dumps(record, indent=2) + "\n")
            moved = "" if candidate == port else f" (not {port}: see above)"
            print(f"Prefect UI: {base_url(candidate)}{moved}  (this checkout's server, pid {record['pid']}; make run"
                  " reports here; make ui-stop stops it)")
            return 0
    print(f"make ui: the Prefect server did not start; see {log}")
    return 1


def launch(prefect: str, port: int, log: Path) -> dict | None:
    """`prefect server start` on `port`, detached; its record once it serves there, else None (stopped)."""
    env = os.environ | {"PREFECT_UI_API_URL": f"{base_url(port)}/api"}
    env.pop("PREFECT_API_URL", None)
    with open(log, "ab") as handle:
        process = subprocess.Popen([prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                                   env=env, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
                                   start_new_session=True, cwd=CHECKOUT)
    record = {"pid": process.pid, "started": started_at(process.pid), "port": port, "checkout": str(CHECKOUT)}
    deadline = time.monotonic() + STARTUP_SECONDS
    try:
        while process.poll() is None and time.monotonic() < deadline:
            if is_ours(record):
                return record
            time.sleep(0.5)
    except BaseException:  # interrupted: no server without a record is left behind
        terminate(process.pid)
        raise
    terminate(process.pid)
    return None


def stop(cache: Path) -> int:
    """Stop this checkout's server, and nothing else; 0."""
    record = read_record(cache)
    (cache / RECORD).unlink(missing_ok=True)
    if record is None or record.get("checkout") != str(CHECKOUT) or started_at(record["pid"]) != record["started"]:
        print("No Prefect UI of this checkout is running")
        return 0
    terminate(record["pid"])
    print(f"Prefect UI stopped (pid {record['pid']}, port {record['port']})")
    return 0


def terminate(pid: int) -> None:
    """SIGTERM, then SIGKILL after 15 s; the process may be another's child, so poll /proc."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while started_at(pid) is not None and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def main() -> None:
    """Entry point for the Makefile."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=CHECKOUT / ".cache")
    parser.add_argument("--port", type=int, default=4200, help="the port to start on when it is free")
    parser.add_argument("--log", type=Path, default=None, help="the server's log (default: <cache>/prefect-ui.log)")
    parser.add_argument("command", choices=["url", "start", "stop"])
    args = parser.parse_args()
    if args.command == "url":
        print(url(args.cache))
        sys.exit(0)
    if args.command == "start":
        sys.exit(start(args.cache, args.port, args.log or args.cache / "prefect-ui.log"))
    sys.exit(stop(args.cache))


if __name__ == "__main__":
    main()
