"""The construct flow's rounds: a task whose query is discarded tries its next candidate scope."""

from __future__ import annotations

from flows.construct import _next_batch


def test_a_task_short_of_verified_queries_tries_its_next_candidates_until_they_run_out():
    candidates = {"a": ["a1", "a2", "a3", "a4"], "b": ["b1"]}
    verified: dict[str, list] = {"a": [], "b": []}
    tried = {"a": 0, "b": 0}

    assert _next_batch(candidates, verified, tried, {"a": 2, "b": 2}) == {"a": ["a1", "a2"], "b": ["b1"]}
    verified["a"].append("a1")  # a2 was discarded at label, b1 at verify
    assert _next_batch(candidates, verified, tried, {"a": 2, "b": 2}) == {"a": ["a3"]}  # b has no candidate left
    assert tried == {"a": 3, "b": 1}
    verified["a"].append("a3")
    assert _next_batch(candidates, verified, tried, {"a": 2, "b": 2}) == {}  # a is full: a4 stays untried
    assert tried == {"a": 3, "b": 1}


def test_a_round_asks_only_for_the_missing_number_of_queries():
    candidates = {"a": ["a1", "a2", "a3", "a4", "a5"]}
    verified, tried = {"a": []}, {"a": 0}
    assert _next_batch(candidates, verified, tried, {"a": 3}) == {"a": ["a1", "a2", "a3"]}
    verified["a"] += ["a1", "a3"]
    assert _next_batch(candidates, verified, tried, {"a": 3}) == {"a": ["a4"]}


def test_tasks_can_want_different_numbers_of_queries():
    candidates = {"hyp": ["h1", "h2", "h3", "h4"], "met": ["m1", "m2", "m3"]}
    verified, tried = {"hyp": [], "met": []}, {"hyp": 0, "met": 0}
    assert _next_batch(candidates, verified, tried, {"hyp": 3, "met": 2}) == {"hyp": ["h1", "h2", "h3"],
                                                                             "met": ["m1", "m2"]}
