import threading

import pytest

from stages.prefetch import in_background


def test_in_background_hands_items_over_in_order_from_another_thread():
    threads = []

    def produce():
        for i in range(5):
            threads.append(threading.current_thread())
            yield i * 10

    assert list(in_background(produce(), ahead=2)) == [0, 10, 20, 30, 40]
    assert threading.current_thread() not in threads and len(set(threads)) == 1


def test_in_background_stays_at_most_ahead_items_ahead():
    produced = []
    taken = threading.Event()

    def produce():
        for i in range(10):
            produced.append(i)
            yield i

    items = in_background(produce(), ahead=2)
    assert next(items) == 0
    taken.wait(0.2)  # give the producer time to run ahead as far as it may
    assert len(produced) <= 4  # the one handed over, two queued, one waiting to be queued
    items.close()


def test_in_background_raises_the_producers_error_in_its_turn():
    def produce():
        yield 1
        raise ValueError("batch 2 is bad")

    items = in_background(produce())
    assert next(items) == 1
    with pytest.raises(ValueError, match="batch 2 is bad"):
        next(items)


def test_closing_in_background_early_stops_and_closes_the_producer():
    closed = threading.Event()

    def produce():
        try:
            yield from range(1000)
        finally:
            closed.set()

    items = in_background(produce(), ahead=1)
    assert next(items) == 0
    items.close()
    assert closed.is_set()


def test_in_background_raises_an_error_of_iter_itself_instead_of_waiting_forever():
    class Refusing:
        def __iter__(self):
            raise RuntimeError("already read")

    with pytest.raises(RuntimeError, match="already read"):
        next(in_background(Refusing()))
