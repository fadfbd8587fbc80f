"""This process's warm pools (`stages.sandbox.warm`): leased one per worker thread, ended at exit.

`run_warm` is what a caller uses: one run in an idle pool of the spec (a new one when none is
idle), and the same run done cold when the pool cannot start or dies. `imports_of` is what the
pools preload: the modules the scripts import.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import logging
import queue
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from stages.sandbox import RunResult, run_sandboxed
from stages.sandbox.warm import PoolDied, PoolSpec, WarmPool
from stages.sandbox.workspace import make_workspace, remove_workspace

log = logging.getLogger(__name__)


# CPython 3.11 builds ASTs with per-interpreter state that two threads parsing at once corrupt
# ("SystemError: AST constructor recursion depth mismatch", python/cpython#106905): one at a time.
_parsing = threading.Lock()


def imports_of(paths: Sequence[Path]) -> tuple[str, ...]:
    """The modules the Python files at `paths` (files, or folders searched) import, minus their own, sorted.

    Their own: the files' modules and the folders' packages.
    """
    files = sorted(p for path in paths for p in ([path] if path.is_file() else path.rglob("*.py")))
    own = {p.stem for p in files} | {path.name for path in paths if path.is_dir()}
    names = set()
    for path in files:
        with _parsing:
            tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
    return tuple(sorted(n for n in names if n.split(".")[0] not in own and n != "__future__"))


_idle: dict[PoolSpec, queue.SimpleQueue] = {}  # per process: a Dask worker has its own
_all: list[WarmPool] = []
_lock = threading.Lock()


@contextlib.contextmanager
def lease(spec: PoolSpec) -> Iterator[WarmPool]:
    """An idle pool of this spec, or a new one; a pool found dead, or whose zygote dies in use, is closed."""
    with _lock:
        idle = _idle.setdefault(spec, queue.SimpleQueue())
    pool = _idle_alive(idle)
    if pool is None:
        pool = WarmPool(spec)
        with _lock:
            _all.append(pool)
    try:
        yield pool
    except PoolDied:
        pool.close()
        raise
    idle.put(pool)


def _idle_alive(idle: queue.SimpleQueue) -> WarmPool | None:
    """An idle pool that still runs; those killed while idle are closed on the way."""
    while True:
        try:
            pool = idle.get_nowait()
        except queue.Empty:
            return None
        if pool.alive():
            return pool
        pool.close()


def run_warm(spec: PoolSpec, prompt: str, public_dir: Path, agent_dir: Path, script: str,
             collect_files: Sequence[str], collect_bytes: int, args: Sequence[str] = (),
             extra_env: dict[str, str] | None = None) -> RunResult:
    """`python /agent/<script> <args>` in a warm pool; if the pool cannot start or dies, the run is done again cold."""
    try:
        with lease(spec) as pool:
            return pool.run(prompt, public_dir, agent_dir, script, collect_files, collect_bytes, extra_env, args)
    except PoolDied as error:
        log.warning("warm pool failed (%s): running %s cold", error, script)
    workspace = make_workspace(prompt, public_dir)
    try:
        return run_sandboxed(workspace, [sys.executable, f"/agent/{script}", *args], limits=spec.limits,
                             agent_dir=agent_dir, hidden=spec.hidden, extra_env=extra_env,
                             collect_files=collect_files, collect_bytes=collect_bytes)
    finally:
        remove_workspace(workspace)


def close_all() -> None:
    """End every pool of this process (the harness's end; atexit)."""
    with _lock:
        pools, _all[:] = list(_all), []
        _idle.clear()
    for pool in pools:
        pool.close()


atexit.register(close_all)


