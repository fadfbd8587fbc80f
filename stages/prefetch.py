"""Run work ahead of its consumer in threads, handing results back in order, a bounded number ahead.

For pipelines whose steps release the GIL (file reads, Arrow and NumPy kernels, Parquet encoding):
while the consumer writes result i, the workers already compute i+1 .. i+ahead, and never more, so
memory stays bounded by `ahead` results however slow the consumer is. `ordered_map` maps a
function over items; `in_background` runs a whole iterator (a producer with state, such as one
that cuts files into batches) on a thread of its own.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

In = TypeVar("In")
Out = TypeVar("Out")


def ordered_map(function: Callable[[In], Out], items: Iterable[In], workers: int = 2,
                ahead: int = 2) -> Iterator[Out]:
    """`function(item)` for every item, in the items' order, with at most `ahead` results pending.

    An exception raised by `function` is re-raised when its result's turn comes; the remaining
    work is cancelled.
    """
    if workers < 1 or ahead < 1:
        raise ValueError(f"workers and ahead must be >= 1, got {workers} and {ahead}")
    pending: deque[Future[Out]] = deque()
    own: set[int] = set()  # its worker threads
    pool = ThreadPoolExecutor(max_workers=workers, initializer=lambda: own.add(threading.get_ident()))
    try:
        for item in items:
            pending.append(pool.submit(function, item))
            if len(pending) > ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        # An unfinished generator may be closed by the garbage collector on one of its own
        # workers, which cannot wait for itself.
        pool.shutdown(wait=threading.get_ident() not in own)


_END = object()


def in_background(items: Iterable[Out], ahead: int = 1) -> Iterator[Out]:
    """The items of `items`, produced on a thread of its own at most `ahead` items ahead.

    The thread starts with the first request. An exception of the producer is re-raised here when
    its turn comes. Closing this iterator early stops the producer after the item it is working on
    (and closes `items`, if it is a generator).
    """
    if ahead < 1:
        raise ValueError(f"ahead must be >= 1, got {ahead}")
    handoff: queue.Queue = queue.Queue(maxsize=ahead)
    stopped = threading.Event()

    def produce() -> None:
        iterator = None
        try:
            iterator = iter(items)  # may raise too: the consumer must hear of it
            for item in iterator:
                handoff.put((item, None))
                if stopped.is_set():
                    return
            handoff.put((_END, None))
        except BaseException as error:  # handed to the consumer, raised there
            handoff.put((_END, error))
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="in_background", daemon=True)
    thread.start()
    try:
        while True:
            item, error = handoff.get()
            if item is _END:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stopped.set()
        while thread.is_alive():  # a producer blocked on a full queue must be let go
            try:
                handoff.get(timeout=0.05)
            except queue.Empty:
                pass
        thread.join()
