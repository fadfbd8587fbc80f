"""The validity gates: each names the task, the gate and the numbers."""

from __future__ import annotations

import pytest

from stages.params import ValidityGates, ValidityParams
from stages.scoring.aggregate.gates import (
    best_reference,
    candidate_task_failures,
    empty_task_failures,
    gate_failures,
    overall_failures,
)

SETTINGS = ValidityParams(oracle="oracle", floors=["fabricate", "nodata"], references=["climatology"],
                          gates=ValidityGates(oracle_min=99.0, floor_max=2.0, reference_max=40.0,
                                              constant_max_share=1 / 3, constant_min_queries=1))
PASSING = {"oracle": 100.0, "fabricate": 0.0, "nodata": 2.0, "climatology": 40.0}


# --- the constant-answer gate ---------------------------------------------------------------------


def test_the_constant_gate_judges_only_a_task_with_enough_queries():
    gates = SETTINGS.gates.model_copy(update={"constant_min_queries": 6})
    settings = SETTINGS.model_copy(update={"gates": gates})
    spread = {"best_constant_share": 2 / 3, "best_constant": 0.5, "gold": {"n": 3}}
    assert gate_failures("t", PASSING, spread, settings) == []
    spread["gold"]["n"] = 6
    assert gate_failures("t", PASSING, spread, settings) == [
        "t: golds are near-constant: the answer 0.5 matches 67% of queries, the gate allows 33%"]


# --- gates ----------------------------------------------------------------------------------------


def test_a_task_at_every_gates_bound_passes():
    assert gate_failures("t", PASSING, {"best_constant_share": 1 / 3, "best_constant": 0.5}, SETTINGS) == []


def test_missing_floor_and_reference_scores_count_as_zero():
    assert gate_failures("t", {"oracle": 99.0}, {}, SETTINGS) == []


@pytest.mark.parametrize(
    ("scores", "spread", "message"),
    [
        ({"oracle": None}, {}, "t: oracle scores None, the gate needs >= 99.0"),
        ({"oracle": 98.9}, {}, "t: oracle scores 98.9, the gate needs >= 99.0"),
        ({"fabricate": 2.5}, {}, "t: fabricate scores 2.5, the gate allows <= 2.0"),
        ({"nodata": 100.0}, {}, "t: nodata scores 100.0, the gate allows <= 2.0"),
        ({"climatology": 40.5}, {}, "t: reference agent climatology scores 40.5, the gate allows <= 40.0"),
        ({}, {"best_constant_share": 0.5, "best_constant": -0.123456},
         "t: golds are near-constant: the answer -0.1235 matches 50% of queries, the gate allows 33%"),
    ],
)
def test_each_failed_gate_is_named_with_its_numbers(scores, spread, message):
    assert gate_failures("t", PASSING | scores, spread, SETTINGS) == [message]


def test_every_failed_gate_is_listed():
    scores = {"oracle": 50.0, "fabricate": 10.0, "nodata": 10.0, "climatology": 90.0}
    failures = gate_failures("t", scores, {"best_constant_share": 1.0, "best_constant": 0.0}, SETTINGS)
    assert [f.split(" scores ")[0].split(":")[1].strip() for f in failures[:4]] == [
        "oracle", "fabricate", "nodata", "reference agent climatology"]
    assert failures[4].startswith("t: golds are near-constant: the answer 0 matches 100% of queries")


# --- candidates: above every reference agent, not above the oracle -------------------------------

WITH_CANDIDATE = SETTINGS.model_copy(update={
    "references": ["climatology", "interpolate"], "candidates": ["heuristic"],
    "gates": SETTINGS.gates.model_copy(update={"candidate_margin": 30.0})})


def test_the_best_reference_is_the_highest_score_and_a_missing_one_counts_as_zero():
    assert best_reference({"climatology": 10.0, "interpolate": 25.0}, WITH_CANDIDATE) == ("interpolate", 25.0)
    assert best_reference({"climatology": None}, WITH_CANDIDATE) == ("climatology", 0.0)
    assert best_reference({}, SETTINGS.model_copy(update={"references": []})) == (None, 0.0)


@pytest.mark.parametrize(("heuristic", "messages"), [
    (25.0, []),    # equal to the best reference: the per-task gate is >=
    (100.0, []),   # equal to the oracle: the oracle is an upper bound, not a strict one
    (None, ["t: candidate heuristic scores 0.0, below reference agent interpolate (25.0); the gate needs >= 25.0"]),
    (24.9, ["t: candidate heuristic scores 24.9, below reference agent interpolate (25.0); the gate needs >= 25.0"]),
])
def test_a_candidate_scores_at_least_the_best_reference_on_every_task(heuristic, messages):
    scores = {"oracle": 100.0, "climatology": 10.0, "interpolate": 25.0, "heuristic": heuristic}
    assert candidate_task_failures("t", scores, WITH_CANDIDATE) == messages


def test_a_candidate_above_the_oracle_fails_and_is_named_by_gate_failures():
    scores = {"oracle": 99.0, "fabricate": 0.0, "nodata": 0.0, "climatology": 0.0, "heuristic": 100.0}
    assert gate_failures("t", scores, {}, WITH_CANDIDATE) == [
        "t: candidate heuristic scores 100.0, above the oracle (99.0); the gate needs <= 99.0"]


@pytest.mark.parametrize(("heuristic", "failures"), [
    (55.0, []),
    (54.9, ["overall: candidate heuristic scores 54.9, the gate needs >= 55 (reference agent interpolate "
            "25.0 + margin 30)"]),
])
def test_a_candidates_overall_score_clears_the_best_reference_by_the_margin(heuristic, failures):
    overall = {"oracle": 100.0, "climatology": 5.0, "interpolate": 25.0, "heuristic": heuristic}
    assert overall_failures(overall, WITH_CANDIDATE) == failures


def test_a_task_that_kept_no_query_fails_with_its_discards_by_stage():
    verification = {"tasks_kept": ["kept"], "tasks": {
        "kept": {"queries_drawn": 2, "discarded": []},
        "empty": {"queries_drawn": 3, "discarded": [
            {"stage": "verify", "reason": "gold misses the task's own targets: ..."},
            {"stage": "verify", "reason": "re-run does not reproduce the gold"},
            {"stage": "align", "reason": "no observed target"},
            {"stage": "formalize", "reason": "query pool is full (1 queries per task)"}]}}}
    assert empty_task_failures(verification) == [
        "empty: no query was verified (3 tried; discarded at align 1, verify 2; reasons in "
        "processed/benchmark/verification.json)"]
