import threading

import pytest

from stages.prefetch import in_background, ordered_map


def test_results_come_back_in_order_whatever_finishes_first():
    gates = {i: threading.Event() for i in range(4)}

    def work(i: int) -> int:
        if i == 0:
            gates[1].wait(5)  # item 1 finishes before item 0
        gates[i].set()
        return i * 10

    assert list(ordered_map(work, range(4), workers=2, ahead=2)) == [0, 10, 20, 30]


def test_no_more_than_ahead_items_are_pulled_from_the_input_beyond_those_taken():
    # Pulls happen on the consumer's thread inside `next`, so the count is exact, not a race: an
    # unbounded look-ahead (pull everything, then hand results over) fails at the first `next`.
    pulled = []

    def items():
        for i in range(10):
            pulled.append(i)
            yield i

    results = ordered_map(lambda i: i * 10, items(), workers=2, ahead=3)
    for taken in range(1, 7):
        assert next(results) == (taken - 1) * 10
        assert len(pulled) == taken + 3  # the ones handed over plus three ahead
    results.close()


def test_an_error_is_raised_when_its_turn_comes():
    def work(i: int) -> int:
        if i == 2:
            raise ValueError("item 2 is bad")
        return i

    results = ordered_map(work, range(5))
    assert [next(results), next(results)] == [0, 1]
    with pytest.raises(ValueError, match="item 2 is bad"):
        next(results)


def test_workers_and_ahead_must_be_positive():
    with pytest.raises(ValueError, match="workers and ahead must be >= 1"):
        list(ordered_map(str, [1], workers=0))


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


def test_closed_on_one_of_its_own_workers_it_does_not_wait_for_that_worker():
    # the garbage collector may finalize an unfinished ordered_map on any thread, its workers included
    done, outcome = threading.Event(), {}

    def work(i: int) -> int:
        if i == 1:
            try:
                results.close()  # the generator is suspended at its first yield
            except RuntimeError as error:
                outcome["error"] = str(error)
            done.set()
        return i

    results = ordered_map(work, range(5), workers=1, ahead=1)
    assert next(results) == 0
    assert done.wait(5) and outcome == {}


def test_in_background_raises_an_error_of_iter_itself_instead_of_waiting_forever():
    class Refusing:
        def __iter__(self):
            raise RuntimeError("already read")

    with pytest.raises(RuntimeError, match="already read"):
        next(in_background(Refusing()))
