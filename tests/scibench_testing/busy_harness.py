"""A harness that keeps sandboxes busy, to be killed: `python -m scibench_testing.busy_harness N SECONDS`.

It does what the evaluation's harness does per query, from `N` threads at once: a tagged workspace
(`make_workspace`), a sandboxed run in its cgroup (`run_sandboxed`), the workspace removed after.
Each program sleeps `SECONDS` seconds, so a kill finds sandboxes, cgroups and workspaces live. It
prints `started <owner tag>` once the signal handlers are in place, then `run <exit code>` for
every run that ends and `harness done` at the end.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from scibench_testing.limits import limits_with

from stages.sandbox import debris, run_sandboxed
from stages.sandbox.workspace import make_workspace, remove_workspace


def run_one(public: Path, seconds: float) -> None:
    """One run in a fresh workspace, as the evaluation runs a query."""
    workspace = make_workspace("sleep\n", public)
    try:
        result = run_sandboxed(workspace, ["sleep", str(seconds)], limits=limits_with(wall_seconds=600))
    finally:
        remove_workspace(workspace)
    print("run", result.exit_code, result.infra_error or "", flush=True)


def main() -> None:
    """Start the runs and wait for them."""
    threads, seconds = int(sys.argv[1]), float(sys.argv[2])
    public = Path(sys.argv[3])
    debris.start_harness()
    print("started", debris.owner_tag(), flush=True)
    workers = [threading.Thread(target=run_one, args=(public, seconds)) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print("harness done", flush=True)


if __name__ == "__main__":
    main()
