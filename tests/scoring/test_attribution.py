"""Checkpoint attribution rules: which class a failed run gets from which checkpoints it wrote."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from stages.catalog import CheckpointSpec
from stages.scoring.attribution import CheckpointError, attribute, matches, read_checkpoint, records

ALIGNED = CheckpointSpec(file="aligned.parquet", stage="alignment", description="joined", key=["id"],
                         columns=["n"], abs_tol=1.0, rel_tol=0.0)
FEATURES = CheckpointSpec(file="features.parquet", stage="modeling", description="feature", key=["id"],
                          columns=["x"], abs_tol=0.0, rel_tol=0.01, min_share=0.5)
TASK = type("Task", (), {"checkpoints": [ALIGNED, FEATURES]})()
REFERENCE = {"aligned.parquet": [{"id": "a", "n": 10.0}, {"id": "b", "n": 20.0}],
             "features.parquet": [{"id": "a", "x": 1.0}, {"id": "b", "x": 2.0}]}


def parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


GOOD_ALIGNED = parquet(pd.DataFrame({"id": ["b", "a"], "n": [21, 10]}))  # order free, within abs_tol
BAD_ALIGNED = parquet(pd.DataFrame({"id": ["a", "b"], "n": [10, 25]}))
GOOD_FEATURES = parquet(pd.DataFrame({"id": ["a", "b"], "x": [1.005, 9.0]}))  # half agree: min_share 0.5
BAD_FEATURES = parquet(pd.DataFrame({"id": ["a", "b"], "x": [1.5, 9.0]}))


@pytest.mark.parametrize(("written", "expected"), [
    ({}, "unattributed"),
    ({"aligned.parquet": BAD_ALIGNED}, "alignment"),
    ({"aligned.parquet": BAD_ALIGNED, "features.parquet": GOOD_FEATURES}, "alignment"),
    ({"aligned.parquet": GOOD_ALIGNED, "features.parquet": BAD_FEATURES}, "modeling"),
    ({"aligned.parquet": GOOD_ALIGNED, "features.parquet": GOOD_FEATURES}, "reasoning"),
    ({"aligned.parquet": GOOD_ALIGNED}, "unattributed"),  # the modeling step is unknown
    ({"features.parquet": GOOD_FEATURES}, "reasoning"),  # right features imply a right join
    ({"features.parquet": BAD_FEATURES}, "unattributed"),  # a wrong join could be the cause
    ({"aligned.parquet": b"not parquet", "features.parquet": BAD_FEATURES}, "unattributed"),
])
def test_classes(written: dict, expected: str):
    assert attribute(TASK, False, written, REFERENCE) == expected


def test_a_passed_query_or_a_task_without_checkpoints_gets_no_class():
    assert attribute(TASK, True, {"aligned.parquet": BAD_ALIGNED}, REFERENCE) is None
    assert attribute(type("T", (), {"checkpoints": []})(), False, {}, {}) is None


@pytest.mark.parametrize(("frame", "problem"), [
    (pd.DataFrame({"id": ["a"]}), r"lacks the columns \['n'\]"),
    (pd.DataFrame({"id": ["a", "a"], "n": [1, 2]}), "repeats keys"),
    (pd.DataFrame({"id": [str(i) for i in range(100_001)], "n": 1}), "has 100001 rows, at most 100000"),
])
def test_an_unusable_checkpoint_is_an_error_naming_the_file(frame: pd.DataFrame, problem: str):
    with pytest.raises(CheckpointError, match=f"aligned.parquet .*{problem}|aligned.parquet {problem}"):
        read_checkpoint(ALIGNED, parquet(frame))


def test_a_missing_or_extra_key_never_matches_and_missing_values_agree_only_with_missing():
    reference = [{"id": "a", "n": 10.0}, {"id": "b", "n": None}]
    assert not matches(ALIGNED, read_checkpoint(ALIGNED, parquet(pd.DataFrame({"id": ["a"], "n": [10]}))),
                       reference)
    both = read_checkpoint(ALIGNED, parquet(pd.DataFrame({"id": ["a", "b"], "n": [10.0, None]})))
    assert matches(ALIGNED, both, reference)
    filled = read_checkpoint(ALIGNED, parquet(pd.DataFrame({"id": ["a", "b"], "n": [10.0, 0.0]})))
    assert not matches(ALIGNED.model_copy(update={"min_share": 1.0}), filled, reference)
    assert records(ALIGNED, both) == [{"id": "a", "n": 10.0}, {"id": "b", "n": None}]
