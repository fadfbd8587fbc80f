"""Splits of a task's query pool: entity-day overlap, near-duplicates, stratified test kept out of train.

The pool below (dates: A = Jan 1-10, B = Jan 11-20, AB = Jan 1-20 of 2000) is small enough to follow
the greedy by hand. Who overlaps whom (sharing at least one entity-day):
    g1 {a,b} AB: g3 r1        g4 {e,f} AB: nobody      r3 {g,h} AB: r2 s1
    g2 {c,d} AB: g3 r1        r1 {a,c} AB: g1 g2 g3    t1 {i,j} A:  t2 s1
    g3 {a,b,c,d} AB: g1 g2 r1 r2 {g} AB: r3 s1         t2 {i,j} AB: t1 s1
    s1 {g,i} AB: r2 r3 t1 t2
SHA-256 order of the ids (the last tie-break): g3 g2 t1 g1 r1 t2 g4 r2 r3 s1.
"""

from __future__ import annotations

import hashlib
from datetime import date

import pytest

from stages.construction.splits import (
    OverlapReport,
    PoolQuery,
    QueryOverlap,
    drop_near_duplicates,
    entity_day_jaccard,
    overlap_report,
    stratified_split,
)

A = (date(2000, 1, 1), date(2000, 1, 10))
AB = (date(2000, 1, 1), date(2000, 1, 20))
KINDS = {"g": "geographic", "r": "attribute", "t": "temporal", "s": "sample_size"}


def q(query_id: str, entities: str, span: tuple[date, date], kind: str | None = None) -> PoolQuery:
    """A pool query named `query_id`, its kind from the id's first letter unless given (default geographic)."""
    kind = kind or KINDS.get(query_id[0], "geographic")
    return PoolQuery(query_id, f"scope_{query_id}", kind, tuple(entities), *span)


POOL = [
    q("g1", "ab", AB), q("g2", "cd", AB), q("g3", "abcd", AB), q("g4", "ef", AB),
    q("r1", "ac", AB), q("r2", "g", AB), q("r3", "gh", AB),
    q("t1", "ij", A), q("t2", "ij", AB),
    q("s1", "gi", AB),
]
BY_ID = {query.query_id: query for query in POOL}


def days(first: int, last: int) -> tuple[date, date]:
    return date(2000, 1, first), date(2000, 1, last)


def test_the_pool_ids_sort_by_sha256_as_the_docstring_says():
    ordered = sorted(BY_ID, key=lambda i: hashlib.sha256(i.encode()).hexdigest())
    assert ordered == ["g3", "g2", "t1", "g1", "r1", "t2", "g4", "r2", "r3", "s1"]


# --- entity_day_jaccard ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (BY_ID["g3"], BY_ID["g1"], 0.5),  # 2 x 20 shared of 80 + 40 - 40
        (BY_ID["t1"], BY_ID["t2"], 0.5),  # 2 x 10 shared of 20 + 40 - 20
        (BY_ID["r3"], BY_ID["s1"], 1 / 3),  # 1 x 20 shared of 40 + 40 - 20
        (q("x", "abc", days(1, 10)), q("y", "bcde", days(6, 20)), 0.125),  # {b,c} x Jan 6-10: 10 of 30 + 60 - 10
        (q("x", "a", days(1, 2)), q("y", "a", days(2, 3)), 1 / 3),  # both ends inclusive: 1 of 2 + 2 - 1
        (q("x", "a", days(5, 5)), q("y", "a", days(5, 5)), 1.0),  # one day is one day
        (q("x", "a", days(1, 1)), q("y", "a", days(2, 2)), 0.0),  # adjacent days do not overlap
        (BY_ID["g1"], BY_ID["g2"], 0.0),  # disjoint entities
        (q("x", "ab", days(1, 10)), q("y", "ab", days(11, 20)), 0.0),  # disjoint periods
        (BY_ID["g4"], BY_ID["g4"], 1.0),
    ],
)
def test_jaccard_of_entity_days(a, b, expected):
    assert entity_day_jaccard(a, b) == pytest.approx(expected, abs=1e-12)
    assert entity_day_jaccard(b, a) == pytest.approx(expected, abs=1e-12)


def test_jaccard_of_two_empty_periods_is_zero():
    empty = q("x", "a", (date(2000, 1, 2), date(2000, 1, 1)))
    assert entity_day_jaccard(empty, empty) == 0.0


# --- drop_near_duplicates -------------------------------------------------------------------------


def test_a_jaccard_equal_to_the_threshold_is_kept():
    kept, dropped = drop_near_duplicates([BY_ID["g1"], BY_ID["g3"]], threshold=0.5)
    assert (kept, dropped) == ([BY_ID["g1"], BY_ID["g3"]], [])


def test_a_jaccard_above_the_threshold_drops_the_later_query():
    kept, dropped = drop_near_duplicates([BY_ID["g3"], BY_ID["g1"]], threshold=0.49)
    assert kept == [BY_ID["g3"]]
    assert dropped == [(BY_ID["g1"], BY_ID["g3"], 0.5)]


def test_a_dropped_query_is_not_compared_against_later_ones():
    x, y, z = q("x", "a", days(1, 10)), q("y", "a", days(1, 15)), q("z", "a", days(6, 20))
    # J(x, y) = 10/15, J(y, z) = 10/20, J(x, z) = 5/20: y goes, z stays (its duplicate y is gone).
    kept, dropped = drop_near_duplicates([x, y, z], threshold=0.4)
    assert kept == [x, z]
    assert dropped == [(y, x, pytest.approx(2 / 3))]


def test_the_dropped_query_names_the_kept_query_it_overlaps_most():
    abc = q("abc", "abc", AB)
    # J(abc, g2) = 20/80 = 0.25 and J(abc, g1) = 40/60: both above 0.2, g1 is the duplicate.
    kept, dropped = drop_near_duplicates([BY_ID["g2"], BY_ID["g1"], abc], threshold=0.2)
    assert kept == [BY_ID["g2"], BY_ID["g1"]]
    assert dropped == [(abc, BY_ID["g1"], pytest.approx(2 / 3))]


def test_equal_overlaps_name_the_earlier_kept_query():
    kept, dropped = drop_near_duplicates([BY_ID["g1"], BY_ID["g2"], BY_ID["g3"]], threshold=0.3)
    assert kept == [BY_ID["g1"], BY_ID["g2"]]
    assert dropped == [(BY_ID["g3"], BY_ID["g1"], 0.5)]


def test_distinct_queries_are_all_kept_in_order():
    kept, dropped = drop_near_duplicates(POOL, threshold=0.5)
    assert (kept, dropped) == (POOL, [])


# --- stratified_split -----------------------------------------------------------------------------


def test_one_test_query_per_kind_chosen_to_leave_nothing_in_train():
    # n = 10, min_test 4: test 4 (one per kind), val 2, train 4. Greedy, by hand:
    # 1. g4 overlaps nobody: key (0, 0, 0), the only zero; g3 (hash-first geographic) would leave 0.5.
    # 2. r2, r3, t1, t2 each overlap two queries that val can take: (0, 0, 2); t1 is first by hash.
    # 3. attribute: r1 leaves 40/100 in train, r2 20/80, r3 20/100 (r2 in train), so r3.
    # 4. s1 is the only sample_size query; what overlaps the test now is r2 and t2: both fit in val.
    result = stratified_split(POOL, train=0.6, val=0.2, min_test=4)
    assert result.splits == {
        "g1": "train", "g2": "train", "g3": "train", "g4": "test", "r1": "train",
        "r2": "val", "r3": "test", "s1": "test", "t1": "test", "t2": "val",
    }
    assert result.overlap.kinds == {
        "test": {"attribute": 1, "geographic": 1, "sample_size": 1, "temporal": 1},
        "val": {"attribute": 1, "temporal": 1},
        "train": {"attribute": 1, "geographic": 3},
    }
    assert result.overlap.max_test_train_jaccard == 0.0
    assert result.overlap.test_entity_days_in_train_share == 0.0
    assert result.overlap.test_entities_in_train == 0


def test_with_fewer_test_places_than_kinds_the_smallest_kind_goes_without():
    # n = 10, min_test 3: test 3 (geographic, attribute, temporal: the three largest kinds), val 2,
    # train 5. Steps 1-3 as above: g4, t1, r3. Overlapping the test: s1 (g and i over A: 30
    # entity-days), t2 (i, j over A: 20), r2 (g: 20); val takes s1 and t2 (before r2 by hash).
    result = stratified_split(POOL, train=0.6, val=0.2, min_test=3)
    assert result.splits == {
        "g1": "train", "g2": "train", "g3": "train", "g4": "test", "r1": "train",
        "r2": "train", "r3": "test", "s1": "val", "t1": "test", "t2": "val",
    }
    # r2 {g} AB in train covers half of r3 {g,h} AB: J = 20 / (40 + 20 - 20); of the test's
    # 40 + 20 + 40 entity-days it covers 20; of the test entities e f g h i j it holds g.
    assert result.overlap == OverlapReport(
        queries=(
            QueryOverlap("g4", 0.0, 0.0),
            QueryOverlap("r3", 0.5, 0.5),
            QueryOverlap("t1", 0.0, 0.0),
        ),
        max_test_train_jaccard=0.5,
        test_entity_days_in_train_share=0.2,
        test_entities_in_train=1,
        test_entities_in_train_share=1 / 6,
        kinds={
            "train": {"attribute": 2, "geographic": 3},
            "val": {"sample_size": 1, "temporal": 1},
            "test": {"attribute": 1, "geographic": 1, "temporal": 1},
        },
    )


def test_without_room_in_val_the_greedy_minimises_what_train_keeps():
    # val 0, test 3, train 7: every query overlapping the test stays in train. By hand:
    # 1. g4 overlaps nobody (0); r3 would leave g (20 of 40), the others 0.75 or all.
    # 2. r3 leaves 20 of 80 (r2, s1 hold g), t1 20 of 60, t2 30 of 80, r1/r2 all of theirs: r3.
    # 3. t1 leaves (20 + 20) of 100, t2 (20 + 30) of 120: t1.
    result = stratified_split(POOL, train=0.8, val=0.0, min_test=3)
    assert result.splits == {
        "g1": "train", "g2": "train", "g3": "train", "g4": "test", "r1": "train",
        "r2": "train", "r3": "test", "s1": "train", "t1": "test", "t2": "train",
    }
    # r3: J 0.5 with r2, 1/3 with s1, half covered; t1: J 0.5 with t2, 0.2 with s1, all covered.
    assert result.overlap.queries == (
        QueryOverlap("g4", 0.0, 0.0), QueryOverlap("r3", 0.5, 0.5), QueryOverlap("t1", 0.5, 1.0),
    )
    assert result.overlap.test_entity_days_in_train_share == pytest.approx(0.4)
    assert (result.overlap.test_entities_in_train, result.overlap.test_entities_in_train_share) == (3, 0.5)
    assert result.overlap.kinds["val"] == {}


def test_test_places_beyond_one_per_kind_go_to_the_kind_furthest_below_its_share():
    # 20 disjoint queries: 8 geographic, 8 attribute, 2 temporal, 2 sample_size; test 6 = one each,
    # then 1.4 short for both large kinds (attribute first by name), then geographic.
    pool = [q(f"{letter}{i:02d}", [f"{letter}{i:02d}"], AB) for letter, n in {"g": 8, "r": 8, "t": 2, "s": 2}.items()
            for i in range(n)]
    result = stratified_split(pool, train=0.5, val=0.2, min_test=3)
    assert result.overlap.kinds["test"] == {"attribute": 2, "geographic": 2, "sample_size": 1, "temporal": 1}
    assert sorted(result.splits.values()).count("val") == 4  # round(20 * 0.2); train the other 10


@pytest.mark.parametrize(
    ("counts", "train", "expected"),
    [
        # test 5: one each, then one place short by 1.0 in both large kinds: attribute (by name).
        ({"g": 8, "r": 8, "t": 2, "s": 2}, 0.55, {"attribute": 2, "geographic": 1, "sample_size": 1, "temporal": 1}),
        # test 6, shares 3 and 2.4: geographic (2 short), then attribute (1.4 short against 1.0).
        ({"g": 10, "r": 8, "t": 1, "s": 1}, 0.5, {"attribute": 2, "geographic": 2, "sample_size": 1, "temporal": 1}),
    ],
)
def test_ties_and_shortfalls_in_the_quotas(counts, train, expected):
    pool = [q(f"{letter}{i:02d}", [f"{letter}{i:02d}"], AB) for letter, n in counts.items() for i in range(n)]
    assert stratified_split(pool, train=train, val=0.2, min_test=3).overlap.kinds["test"] == expected


def test_the_share_left_in_train_outranks_the_number_of_overlapping_queries():
    # val 0, one test query. x: p covers all of it; p: x covers half; q1, q2: y covers all.
    # y overlaps two queries (q1, q2) but they cover only 10 of its 40 entity-days: y wins.
    pool = [q("x", "a", days(1, 10)), q("p", "a", days(1, 20)), q("y", "cd", AB),
            q("q1", "c", days(1, 5)), q("q2", "d", days(1, 5))]
    result = stratified_split(pool, train=0.8, val=0.0, min_test=1)
    assert [i for i, split in result.splits.items() if split == "test"] == ["y"]
    assert result.overlap.test_entity_days_in_train_share == 0.25


def test_the_entity_share_left_in_train_outranks_the_number_of_overlapping_queries():
    # val 0, one test query. u {a,b}: a1 and a2 cover a (20 of 40), b stays clean; v {c}: c1 covers
    # 10 of 20. Both leave half their entity-days in train, but u leaves one of two basins, v all.
    pool = [q("u", "ab", AB), q("a1", "a", days(1, 10)), q("a2", "a", days(11, 20)),
            q("v", "c", AB), q("c1", "c", days(1, 10))]
    result = stratified_split(pool, train=0.8, val=0.0, min_test=1)
    assert [i for i, split in result.splits.items() if split == "test"] == ["u"]
    assert result.overlap.test_entities_in_train_share == 0.5


def test_a_disjoint_pool_picks_within_a_kind_by_hash_order():
    pool = [q(i, [i], AB, "geographic") for i in ["g1", "g2", "g3", "g4", "r1", "r2", "r3", "s1", "t1", "t2"]]
    result = stratified_split(pool, train=0.6, val=0.2, min_test=3)
    # hash order g3 g2 t1 g1 r1 t2 g4 r2 r3 s1: test the first three, val the next two.
    assert [i for i, split in result.splits.items() if split == "test"] == ["g2", "g3", "t1"]
    assert [i for i, split in result.splits.items() if split == "val"] == ["g1", "r1"]


def test_the_split_ignores_input_order_and_repeats_exactly():
    first = stratified_split(POOL, train=0.6, val=0.2, min_test=3)
    for order in (POOL[::-1], POOL[3:] + POOL[:3], sorted(POOL, key=lambda p: p.scope_kind)):
        assert stratified_split(order, train=0.6, val=0.2, min_test=3) == first


def test_a_pool_smaller_than_min_test_is_refused_with_its_size():
    with pytest.raises(ValueError) as raised:
        stratified_split(POOL[:2], train=0.6, val=0.2, min_test=3)
    assert str(raised.value) == "2 queries, a task needs at least 3 for its test split"


def test_a_pool_of_exactly_min_test_is_all_test():
    result = stratified_split(POOL[:3], train=0.6, val=0.2, min_test=3)
    assert result.splits == {"g1": "test", "g2": "test", "g3": "test"}
    assert result.overlap.kinds == {"train": {}, "val": {}, "test": {"geographic": 3}}


def test_a_small_pool_fills_test_then_val_and_leaves_train_empty():
    # n = 4, min_test 3: test 3, val min(1, round(0.8)) = 1, train 0. Four kinds of one query each,
    # three test places: attribute, geographic, sample_size (by name); temporal t1 goes to val.
    result = stratified_split([BY_ID[i] for i in ("g4", "r2", "t1", "s1")], train=0.6, val=0.2, min_test=3)
    assert result.splits == {"g4": "test", "r2": "test", "s1": "test", "t1": "val"}


def test_repeated_query_ids_are_refused():
    with pytest.raises(ValueError, match="query ids repeat"):
        stratified_split([BY_ID["g1"], BY_ID["g1"], BY_ID["g2"]], train=0.6, val=0.2, min_test=3)


@pytest.mark.parametrize(("train", "val"), [(0.9, 0.2), (-0.1, 0.2), (0.6, -0.2)])
def test_invalid_fractions_are_refused(train, val):
    with pytest.raises(ValueError, match="split fractions"):
        stratified_split(POOL, train=train, val=val, min_test=3)


# --- overlap_report of any assignment -------------------------------------------------------------


def test_overlap_report_counts_the_union_of_train_queries():
    splits = {"g3": "test", "t1": "test", "g1": "train", "r1": "train", "t2": "train",
              "g2": "val", "g4": "val", "r2": "val", "r3": "val", "s1": "val"}
    # g3 {a,b,c,d} AB: J 0.5 with g1 and with r1, which together cover a, b, c: 60 of 80.
    # t1 {i,j} A: J(t1, t2) = 0.5 and t2 covers all of it. Split: 80 of 100; entities 5 of 6.
    assert overlap_report(POOL, splits) == OverlapReport(
        queries=(QueryOverlap("g3", 0.5, 0.75), QueryOverlap("t1", 0.5, 1.0)),
        max_test_train_jaccard=0.5,
        test_entity_days_in_train_share=0.8,
        test_entities_in_train=5,
        test_entities_in_train_share=5 / 6,
        kinds={
            "train": {"attribute": 1, "geographic": 1, "temporal": 1},
            "val": {"attribute": 2, "geographic": 2, "sample_size": 1},
            "test": {"geographic": 1, "temporal": 1},
        },
    )
