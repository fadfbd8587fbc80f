"""The construct flow's rounds: a task whose query is discarded tries its next candidate scope."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

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


class _Finished:
    """A label future that is already done (the order the runs finish in is not the order read)."""

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


def test_a_round_aligns_each_task_and_keeps_results_in_query_order_whatever_finishes_first(monkeypatch):
    import flows.construct as construct
    from stages.construction.drawing import Discard

    def query(task_id: str, n: int):
        return SimpleNamespace(query_id=f"{task_id}{n}", task_id=task_id, scope=f"s{n}")

    outcomes = {  # query id -> what label (and the verify it runs) returns
        "a1": ("gold-a1", None),
        "a2": (None, Discard("a", "s2", "label", "script failed", "a2")),
        "a3": ("gold-a3", Discard("a", "s3", "verify", "gold misses its targets", "a3")),
        "b1": ("gold-b1", None),
        "b2": ("gold-b2", None),
    }
    aligned, submitted = [], []

    def align(task, key, queries, store, fresh):
        aligned.append((task.id, key, [q.query_id for q in queries], store, fresh))
        staged = [q for q in queries if q.query_id != "b3"]  # b3 cannot be staged
        return staged, [Discard("b", "s3", "align", "no data", "b3")] if len(staged) < len(queries) else []

    def submit(query, spec, limits, hidden, key, rel_tol, store, root, warm):
        submitted.append((query.query_id, root))
        return _Finished(outcomes[query.query_id])

    def screen(spec, queries, folder):  # b4 is out of reach: no annotator runs for it
        assert folder == Path("/project/processed/benchmark/tasks") / spec[-1]
        return [q for q in queries if q.query_id != "b4"], [Discard("b", "s4", "screen", "no room", "b4")] * (
            any(q.query_id == "b4" for q in queries))

    monkeypatch.setattr(construct, "align", align)
    monkeypatch.setattr(construct.screening, "screen", screen)
    monkeypatch.setattr(construct, "label", SimpleNamespace(submit=submit))
    batch = {"a": [query("a", 1), query("a", 2), query("a", 3)],
             "b": [query("b", 1), query("b", 2), query("b", 3), query("b", 4)]}
    by_id = {"a": SimpleNamespace(spec="spec-a", id="a"), "b": SimpleNamespace(spec="spec-b", id="b")}
    settings = SimpleNamespace(verify_rel_tol=1e-6)
    golds, verified = {}, {"a": [], "b": []}

    discards = construct._round(batch, {"b"}, by_id, {"a": "ka", "b": "kb"}, settings, None, [], golds,
                                verified, "store", Path("/project"))

    assert aligned == [("a", "ka", ["a1", "a2", "a3"], "store", True),
                       ("b", "kb", ["b1", "b2", "b3", "b4"], "store", False)]
    assert submitted == [(q, Path("/project")) for q in ("a1", "a2", "a3", "b1", "b2")]  # the root for workers
    assert [q.query_id for q in verified["a"]] == ["a1"] and [q.query_id for q in verified["b"]] == ["b1", "b2"]
    assert golds == {"a1": "gold-a1", "a3": "gold-a3", "b1": "gold-b1", "b2": "gold-b2"}  # not a2: no label
    assert [(d.query_id, d.stage) for d in discards] == [("b3", "align"), ("b4", "screen"), ("a2", "label"),
                                                         ("a3", "verify")]
