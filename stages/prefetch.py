"""Run a function over items in a few threads, handing results back in order, a bounded number ahead.

For pipelines whose steps release the GIL (file reads, Arrow and NumPy kernels, Parquet encoding):
while the consumer writes result i, the workers already compute i+1 .. i+ahead, and never more, so
memory stays bounded by `ahead` results however slow the consumer is.
"""

from __future__ import annotations

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
    with ThreadPoolExecutor(max_workers=workers) as pool:
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
