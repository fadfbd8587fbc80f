"""`make run`: `dvc repro` reporting to this checkout's Prefect server, then the summary; it ends with make.

    python -m flows.make_run [--cache .cache] [--port 4200] [--keep-ui]

Starts this checkout's server (flows/ui.py) unless it is up, so the flows report to one server
instead of each starting a temporary one; a server it started it stops at the end (`--keep-ui`,
`make run KEEP_UI=1`, keeps it; `make ui` shows the runs again, they are in its database), one
that was up before stays up. Without a server the flows still run, each on a temporary one.

Stopping: GNU make and `dvc repro` pass no SIGTERM on to what they run, and end without ending it.
So this process asks the kernel for SIGTERM when make exits (stages/sandbox/debris.py
`die_with_parent`), and on SIGTERM, SIGINT or SIGHUP passes the signal on to `dvc repro`, whose
harness stages (started with `exec`, see dvc.yaml) in turn get SIGTERM when dvc exits and
remove their sandboxes, workspaces and cgroups before they end. Nothing of the run is left.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from flows import ui
from stages.sandbox import debris


def main() -> None:
    """Entry point for `make run`; exits with the status of `dvc repro` (or of the summary)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=ui.CHECKOUT / ".cache")
    parser.add_argument("--port", type=int, default=4200)
    parser.add_argument("--keep-ui", action="store_true", help="leave a server this run started running")
    args = parser.parse_args()
    debris.die_with_parent(signal.SIGTERM)
    started = not ui.url(args.cache) and ui.start(args.cache, args.port, args.cache / "prefect-ui.log") == 0
    env = dict(os.environ)
    if api := ui.url(args.cache):
        env["PREFECT_API_URL"] = api
        print(f"dvc repro (flow runs report to this checkout's Prefect server, {api})", flush=True)
    else:
        env.pop("PREFECT_API_URL", None)
        print("dvc repro (flow runs report to temporary Prefect servers, one per flow)", flush=True)
    try:
        status = run(["dvc", "repro"], env)
        if status == 0:
            status = run([sys.executable, "-m", "stages.report", "--summary"], env)
    finally:
        if started and not args.keep_ui:
            ui.stop(args.cache)
            print("make run: stopped the Prefect server it started (make ui shows these runs again; "
                  "KEEP_UI=1 keeps it up)")
    sys.exit(status)


def run(argv: list[str], env: dict[str, str]) -> int:
    """Run `argv`, passing a stop signal this process gets on to it; its exit status (128 + N: signal N)."""
    child = subprocess.Popen(argv, env=env)
    previous = {signum: signal.signal(signum, lambda signum, _: child.send_signal(signum))
                for signum in debris.STOP_SIGNALS}
    try:
        returncode = child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 128 - returncode if returncode < 0 else returncode


if __name__ == "__main__":
    main()
