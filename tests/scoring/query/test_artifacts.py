"""An agent's artifact is read as a hostile file: every problem is an `ArtifactError`, never a crash.

The parser (`parse_artifact`) is called here in this process: `read_artifact`, what the harness
calls, runs it in a forked child (`stages.scoring.query.confined`, tested in test_confined.py and
test_artifact_bombs.py), where mutation testing's record of which test calls which function
cannot follow it. The first test pins that the child hands back exactly what the parser returns.
"""

from __future__ import annotations

import decimal
from datetime import date

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scibench_testing.graded import CLUSTERS, PREDICTIONS, days, parquet

from stages.scoring.query import artifacts
from stages.scoring.query.artifacts import ArtifactError, parse_artifact, read_artifact

DATES = days(date(2000, 1, 1), 2)
REQUIRED = pd.DataFrame({"gauge_id": ["01013500", "01013500", "01022500", "01022500"],
                         "date": pd.DatetimeIndex(DATES * 2).astype("datetime64[ns]")})
GOOD = REQUIRED.assign(qsim_mm_d=[1.0, 2.0, 3.0, 4.0])
BASINS = pd.DataFrame({"gauge_id": ["01013500", "01022500", "01030500"]})


def read(data: pd.DataFrame | pa.Table | bytes, spec=PREDICTIONS, required=REQUIRED) -> pd.DataFrame:
    return parse_artifact(data if isinstance(data, bytes) else parquet(data), spec, required)


def fails(data, message: str, spec=PREDICTIONS, required=REQUIRED) -> str:
    with pytest.raises(ArtifactError, match=message) as error:
        read(data, spec, required)
    return str(error.value)


# --- what a good file gives back ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "spec", "required"),
    [
        (GOOD, PREDICTIONS, REQUIRED),
        (GOOD.assign(date=["2000-01-01", "2000-01-02"] * 2, other="x"), PREDICTIONS, REQUIRED),
        (BASINS.assign(cluster=[0.0, 1.0, 2.0]), CLUSTERS, BASINS),
    ],
    ids=["predictions", "dates-as-text", "clusters"],
)
def test_the_harness_reads_in_a_child_exactly_what_the_parser_returns(frame, spec, required):
    data = parquet(frame)
    pd.testing.assert_frame_equal(read_artifact(data, spec, required), parse_artifact(data, spec, required),
                                  check_exact=True)
    with pytest.raises(ArtifactError, match=r"^predictions.parquet lacks the columns \['qsim_mm_d'\]"):
        read_artifact(parquet(GOOD.drop(columns="qsim_mm_d")), PREDICTIONS, REQUIRED)


def test_a_good_file_gives_the_required_rows_in_their_order_with_normalised_dtypes():
    shuffled = GOOD.iloc[[3, 1, 0, 2]].assign(other=["x"] * 4)  # row order and extra columns do not matter
    frame = read(shuffled)
    pd.testing.assert_frame_equal(frame, GOOD, check_dtype=False)
    assert frame.columns.tolist() == ["gauge_id", "date", "qsim_mm_d"]
    assert frame["date"].dtype == "datetime64[ns]"
    assert frame["qsim_mm_d"].dtype == "float64"


def test_rows_beyond_the_required_ones_are_ignored():
    extra = pd.concat([GOOD, pd.DataFrame({"gauge_id": ["09999999"], "date": [pd.Timestamp("2000-01-01")],
                                           "qsim_mm_d": [float("nan")]})])
    assert read(extra)["qsim_mm_d"].tolist() == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize(
    "dates",
    [
        ["2000-01-01", "2000-01-02"] * 2,  # ISO text
        [d.date() for d in DATES] * 2,  # Parquet date32
        [d + pd.Timedelta(hours=12) for d in DATES] * 2,  # a time of day is dropped
    ],
    ids=["text", "date32", "noon"],
)
def test_dates_as_text_days_or_timestamps_are_normalised_to_days(dates):
    frame = read(GOOD.assign(date=dates))
    assert frame["date"].tolist() == REQUIRED["date"].tolist()
    assert frame["date"].dtype == "datetime64[ns]"


def test_numbers_written_as_text_are_read_as_numbers():
    frame = read(GOOD.assign(qsim_mm_d=["1.5", "2", "3e0", "4"]))
    assert frame["qsim_mm_d"].tolist() == [1.5, 2.0, 3.0, 4.0]


def test_decimal_and_half_precision_values_are_read_as_floats():
    table = pa.table({"gauge_id": GOOD["gauge_id"], "date": pa.array(GOOD["date"]),
                      "qsim_mm_d": pa.array([decimal.Decimal("1.5")] * 4)})
    assert read(table)["qsim_mm_d"].tolist() == [1.5] * 4
    table = table.set_column(2, "qsim_mm_d", pa.array(np.array([1, 2, 3, 4], dtype=np.float16)))
    assert read(table)["qsim_mm_d"].tolist() == [1.0, 2.0, 3.0, 4.0]


def test_entity_ids_written_as_integers_lose_their_leading_zeros_and_miss_the_required_rows():
    # Keys are compared as text: 1013500 is "1013500", not the CAMELS id "01013500".
    fails(GOOD.assign(gauge_id=[1013500, 1013500, 1022500, 1022500]),
          r"4 of 4 required rows are missing \(first: \['01013500', '2000-01-01 00:00:00'\]\)")


def test_entity_ids_written_as_integers_match_ids_without_leading_zeros():
    required = REQUIRED.assign(gauge_id=["1013500", "1013500", "1022500", "1022500"])
    frame = read(GOOD.assign(gauge_id=[1013500, 1013500, 1022500, 1022500]), required=required)
    assert frame["gauge_id"].tolist() == ["1013500", "1013500", "1022500", "1022500"]


def test_a_frame_written_with_its_keys_as_the_index_is_read_like_any_other():
    # `frame.set_index([...]).to_parquet(...)` stores the keys as columns and pandas metadata that
    # names them the index; the reader reads the columns, not what the file's metadata asks for.
    frame = read(parquet_with_index(GOOD.set_index(["gauge_id", "date"])))
    pd.testing.assert_frame_equal(frame, GOOD, check_dtype=False)


def parquet_with_index(frame: pd.DataFrame) -> bytes:
    table = pa.Table.from_pandas(frame, preserve_index=True)
    return parquet(table)


# --- cluster labels -------------------------------------------------------------------------------


def test_whole_number_labels_of_any_numeric_type_are_read_as_integers():
    for labels in ([0, 1, 2], [0.0, 1.0, 2.0], ["0", "1", "2"]):
        frame = read(BASINS.assign(cluster=labels), CLUSTERS, BASINS)
        assert frame["cluster"].tolist() == [0, 1, 2]
        assert frame["cluster"].dtype == "int64"


@pytest.mark.parametrize("labels", [[0.0, 1.0, 2.5], [0.0, 1.0, float("nan")], [0.0, 1.0, float("inf")]])
def test_labels_that_are_not_whole_numbers_are_refused(labels):
    fails(BASINS.assign(cluster=labels), "clusters.parquet: column 'cluster' must hold whole numbers",
          CLUSTERS, BASINS)


@pytest.mark.parametrize(
    "labels",
    [pa.array([1e300, 2e300, 3.0]), pa.array([2**64 - 1, 0, 1], pa.uint64()), pa.array([2**53 + 2, 0, 1])],
    ids=["1e300", "uint64-max", "2**53+2"],
)
def test_labels_too_large_for_an_exact_integer_are_refused(labels):
    # Cast to int64, 1e300 and 2e300 would become one label and 2**64 - 1 would become -1.
    fails(pa.table({"gauge_id": BASINS["gauge_id"], "cluster": labels}),
          r"column 'cluster' must hold whole numbers \(at most 9007199254740992 in magnitude\)",
          CLUSTERS, BASINS)


def test_text_labels_are_refused():
    fails(BASINS.assign(cluster=["a", "b", "c"]),
          "clusters.parquet: unreadable values: Unable to parse string 'a'", CLUSTERS, BASINS)


# --- hostile and broken files ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b"", b"PAR1", b"not a parquet file at all", np.random.default_rng(0).bytes(4096),
     parquet(GOOD)[:-9], parquet(GOOD)[: len(parquet(GOOD)) // 2]],
    ids=["empty", "magic-only", "text", "random", "footer-cut", "half"],
)
def test_bytes_that_are_not_a_parquet_file_are_refused(data):
    fails(data, r"^predictions.parquet is not a readable Parquet file: ")


def test_a_file_without_a_declared_column_is_refused_naming_it():
    message = fails(GOOD.drop(columns="qsim_mm_d").assign(q=1.0),
                    r"predictions.parquet lacks the columns \['qsim_mm_d'\]")
    assert message.endswith("(has ['date', 'gauge_id', 'q'])")


def test_duplicate_keys_are_refused():
    fails(pd.concat([GOOD, GOOD.iloc[[1]]]),
          r"predictions.parquet: 1 duplicate keys \(first: \['01013500', Timestamp\('2000-01-02 00:00:00'\)\]\)")


def test_two_times_of_one_day_are_duplicate_keys():
    noon = GOOD.iloc[[0]].assign(date=DATES[0] + pd.Timedelta(hours=12))
    fails(pd.concat([GOOD, noon]), "1 duplicate keys")


def test_missing_required_rows_are_refused_with_the_first_missing_key():
    fails(GOOD.iloc[[0, 1, 3]],
          r"predictions.parquet: 1 of 4 required rows are missing \(first: \['01022500', '2000-01-01 00:00:00'\]\)")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), None])
def test_null_or_non_finite_values_on_required_rows_are_refused(bad):
    fails(GOOD.assign(qsim_mm_d=[1.0, bad, bad, 4.0]),
          r"predictions.parquet: column 'qsim_mm_d' has 2 null or non-finite values on required rows")


def test_a_null_key_is_a_missing_row():
    fails(GOOD.assign(gauge_id=[None, "01013500", "01022500", "01022500"]), "1 of 4 required rows are missing")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["x", "2", "3", "4"], "unreadable values: Unable to parse string 'x' at position 0"),
        ([[1.0], [2.0], [3.0], [4.0]], "unreadable values: "),
        ([{"a": 1.0}] * 4, "unreadable values: "),
    ],
    ids=["text", "list", "struct"],
)
def test_values_that_are_not_numbers_are_refused(values, message):
    fails(pa.table({"gauge_id": GOOD["gauge_id"], "date": pa.array(GOOD["date"]), "qsim_mm_d": values}),
          "predictions.parquet: " + message)


@pytest.mark.parametrize(
    ("dates", "message"),
    [
        (["2000-01-01", "nope"] * 2, "unreadable values: "),
        ([date(9999, 1, 1), date(9999, 1, 2)] * 2, "unreadable values: Out of bounds nanosecond timestamp"),
        ([1, 2] * 2, "2 duplicate keys"),  # integers are nanoseconds: both fall on 1970-01-01
    ],
    ids=["text", "year-9999", "integers"],
)
def test_dates_that_are_not_days_of_the_scope_are_refused(dates, message):
    fails(GOOD.assign(date=dates), "predictions.parquet: " + message)


def test_a_list_typed_key_never_matches_a_required_row():
    table = pa.table({"gauge_id": [["01013500"], ["01013500"], ["01022500"], ["01022500"]],
                      "date": pa.array(GOOD["date"]), "qsim_mm_d": [1.0, 2.0, 3.0, 4.0]})
    fails(table, "required rows are missing")


def test_a_column_written_twice_is_refused():
    table = pa.table([pa.array(GOOD["gauge_id"]), pa.array(GOOD["date"]), pa.array(GOOD["qsim_mm_d"]),
                      pa.array(GOOD["qsim_mm_d"])], names=["gauge_id", "date", "qsim_mm_d", "qsim_mm_d"])
    fails(table, "predictions.parquet: unreadable values: ")


def test_a_file_declaring_more_rows_than_are_read_is_refused_before_its_data(monkeypatch):
    monkeypatch.setattr(artifacts, "EXTRA_ROWS_ALLOWED", 2)
    six = pd.concat([GOOD, GOOD.assign(gauge_id="09999999").iloc[:2]])
    assert len(read(six)) == 4  # 4 required + 2 extra: at the bound
    seven = pd.concat([GOOD, GOOD.assign(gauge_id="09999999").iloc[:3]])
    fails(seven, r"^predictions.parquet has 7 rows, at most 6 are read$")


def test_a_file_declaring_a_large_uncompressed_size_is_refused_before_its_data(monkeypatch):
    monkeypatch.setattr(artifacts, "MAX_UNCOMPRESSED_BYTES", 100)
    fails(GOOD, r"^predictions.parquet declares \d+ uncompressed bytes, more than 100$")
    monkeypatch.setattr(artifacts, "MAX_UNCOMPRESSED_BYTES", 10**6)
    assert len(read(GOOD)) == 4


def test_hostile_pandas_metadata_cannot_rename_or_hide_the_columns():
    # Metadata claiming the value column is named otherwise and that the keys are an index.
    table = pa.Table.from_pandas(GOOD, preserve_index=False)
    metadata = (b'{"index_columns": ["gauge_id"], "column_indexes": [], "columns": ['
                b'{"name": "gauge_id", "field_name": "gauge_id", "pandas_type": "unicode", '
                b'"numpy_type": "object", "metadata": null}, '
                b'{"name": "renamed", "field_name": "qsim_mm_d", "pandas_type": "float64", '
                b'"numpy_type": "float64", "metadata": null}], "pandas_version": "2.0.0"}')
    frame = read(table.replace_schema_metadata({b"pandas": metadata}))
    pd.testing.assert_frame_equal(frame, GOOD, check_dtype=False)


def corruptions(data: bytes) -> list[bytes]:
    """Every truncation and, at every 3rd byte, a flipped byte: cheap hostile variants of one file."""
    cut = [data[:n] for n in range(len(data))]
    flipped = [data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:] for i in range(0, len(data), 3)]
    return cut + flipped


def test_no_corruption_of_a_good_file_raises_anything_but_an_artifact_error():
    outcomes = {"read": 0, "refused": 0}
    for data in corruptions(parquet(GOOD)):
        try:
            read(data)
            outcomes["read"] += 1
        except ArtifactError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 0
    assert sum(outcomes.values()) == len(corruptions(parquet(GOOD)))
