"""Run a producer ahead of its consumer on a thread of its own, a bounded number of items ahead.

For pipelines whose steps release the GIL (file reads, Arrow and NumPy kernels, Parquet encoding):
while the consumer writes item i, the producer already makes i+1 .. i+ahead, and never more, so
memory stays bounded by `ahead` items however slow the consumer is. The repository writer reads
every stream through it (`repository._write_streams`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

Out = TypeVar("Out")


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
