"""The evaluation process's one event loop, on a thread of its own, where every query's agent loop runs.

The harness runs queries from worker threads (one per query in flight); an `llm` agent's loop is
a coroutine, so each worker hands it to this loop and waits for its result. Many queries' loops
then share one thread and one model client, and the time a loop waits on the model costs no thread
and no CPU. Blocking work of a loop (a code cell in its kernel, a call through the proxy) runs on
the loop's executor, sized for as many queries as are in flight.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
EXECUTOR_THREADS = 512  # blocking steps in flight at once (each is a query waiting on a cell or a call)

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _start() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    loop.set_default_executor(ThreadPoolExecutor(EXECUTOR_THREADS, thread_name_prefix="llm-step"))
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    threading.Thread(target=serve, name="llm-event-loop", daemon=True).start()
    ready.wait()
    return loop


def event_loop() -> asyncio.AbstractEventLoop:
    """The process's loop, started on first use."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = _start()
        return _loop


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` on the process's loop and wait for its result (from any thread but the loop's)."""
    return asyncio.run_coroutine_threadsafe(coroutine, event_loop()).result()
