import pytest

from stages.construct import answers_agree, split_queries


def test_split_keeps_min_test_and_shares():
    ids = [f"q-{i:02d}" for i in range(20)]
    splits = split_queries(ids, train=0.6, val=0.2, min_test=3)
    counts = {name: list(splits.values()).count(name) for name in ("train", "val", "test")}
    assert counts == {"train": 12, "val": 4, "test": 4}


def test_small_task_still_gets_three_test_queries():
    splits = split_queries(["q-a", "q-b", "q-c", "q-d", "q-e", "q-f"], 0.6, 0.2, 3)
    assert sorted(q for q, s in splits.items() if s == "test") == ["q-a", "q-b", "q-c"]
    assert list(splits.values()).count("val") == 1


def test_split_is_independent_of_input_order():
    ids = [f"q-{i}" for i in range(10)]
    assert split_queries(ids, 0.6, 0.2, 3) == split_queries(list(reversed(ids)), 0.6, 0.2, 3)


def test_too_few_queries_for_a_test_split_is_an_error():
    with pytest.raises(ValueError, match="2 verified queries, a task needs at least 3"):
        split_queries(["q-a", "q-b"], 0.6, 0.2, 3)


def test_answers_agree_within_relative_tolerance_only():
    gold = {"metrics": {"nse": 0.712345, "kge": 0.5}}
    assert answers_agree(gold, {"metrics": {"nse": 0.712345 * (1 + 1e-8), "kge": 0.5}}, 1e-6)
    assert not answers_agree(gold, {"metrics": {"nse": 0.7124, "kge": 0.5}}, 1e-6)
    assert not answers_agree(gold, {"metrics": {"nse": 0.712345}}, 1e-6)
    assert answers_agree({"answer": ["a", 1.0]}, {"answer": ["a", 1.0]}, 1e-6)
    assert not answers_agree({"answer": True}, {"answer": 1}, 1e-6)
