import threading

import pytest

from stages.prefetch import ordered_map


def test_results_come_back_in_order_whatever_finishes_first():
    gates = {i: threading.Event() for i in range(4)}

    def work(i: int) -> int:
        if i == 0:
            gates[1].wait(5)  # item 1 finishes before item 0
        gates[i].set()
        return i * 10

    assert list(ordered_map(work, range(4), workers=2, ahead=2)) == [0, 10, 20, 30]


def test_no_more_than_ahead_items_are_started_before_the_first_is_taken():
    started = []
    results = ordered_map(started.append, range(10), workers=2, ahead=3)
    next(results)
    assert len(started) <= 4  # the one handed over plus three ahead
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
