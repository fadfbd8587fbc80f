"""Checkpoint attribution rules: which class a failed run gets from which checkpoints it wrote.

The file checks call the parser (`parse_checkpoint`) in this process; `read_checkpoint`, which
`attribute` calls, runs it in a forked child (`stages.scoring.query.confined`).
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stages.catalog import CheckpointSpec
from stages.scoring.query.attribution import (
    CheckpointError,
    attribute,
    matches,
    parse_checkpoint,
    read_checkpoint,
    records,
)
from stages.scoring.query.confined import Bounds

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
        parse_checkpoint(ALIGNED, parquet(frame))


def test_a_missing_or_extra_key_never_matches_and_missing_values_agree_only_with_missing():
    reference = [{"id": "a", "n": 10.0}, {"id": "b", "n": None}]
    assert not matches(ALIGNED, parse_checkpoint(ALIGNED, parquet(pd.DataFrame({"id": ["a"], "n": [10]}))),
                       reference)
    data = parquet(pd.DataFrame({"id": ["a", "b"], "n": [10.0, None]}))
    both = read_checkpoint(ALIGNED, data)  # through the child: exactly the parser's frame
    pd.testing.assert_frame_equal(both, parse_checkpoint(ALIGNED, data), check_exact=True)
    assert matches(ALIGNED, both, reference)
    filled = parse_checkpoint(ALIGNED, parquet(pd.DataFrame({"id": ["a", "b"], "n": [10.0, 0.0]})))
    assert not matches(ALIGNED.model_copy(update={"min_share": 1.0}), filled, reference)
    assert records(ALIGNED, both) == [{"id": "a", "n": 10.0}, {"id": "b", "n": None}]


def test_a_checkpoint_that_decodes_past_the_memory_bound_is_an_error_naming_the_bound():
    # 1 MiB of text, dictionary-encoded over 4,096 rows: a file of a few kB, 4 GiB once decoded.
    ids = pa.DictionaryArray.from_arrays(pa.array(np.zeros(4096, np.int32)), pa.array(["x" * (1 << 20)]))
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": ids, "n": np.zeros(4096)}), buffer, store_schema=False,
                   dictionary_pagesize_limit=2 << 20, compression="zstd")
    bomb = buffer.getvalue()
    assert len(bomb) < 10_000
    with pytest.raises(CheckpointError) as error:
        read_checkpoint(ALIGNED, bomb, Bounds(memory_bytes=256 << 20))
    assert str(error.value) == "aligned.parquet: reading it needs more than 268435456 bytes of memory"
