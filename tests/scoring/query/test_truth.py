"""Hidden truth: what staging withholds, what the truth holds and which rows the agent owes."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
import pytest
from scibench_testing.graded import days

from stages.catalog import TruthSpec
from stages.scoring.query.truth import query_seed, rows_rule, split_day, withhold

NAN = float("nan")
HOLDOUT = TruthSpec(kind="holdout", column="qobs_mm_d", test_share=0.3)


def series(values: dict[str, list[float]], start: date = date(2000, 1, 1)) -> pd.DataFrame:
    """A time series table, one entity per key of `values`, consecutive days from `start`."""
    frames = [pd.DataFrame({"gauge_id": entity, "date": days(start, len(flows)), "prcp_mm_d": 2.0,
                            "qobs_mm_d": flows}) for entity, flows in values.items()]
    return pd.concat(frames, ignore_index=True)


def hidden_runs(mask: np.ndarray) -> list[int]:
    """Lengths of the maximal runs of True in a boolean mask."""
    lengths, current = [], 0
    for value in [*mask, False]:
        if value:
            current += 1
        elif current:
            lengths.append(current)
            current = 0
    return lengths


# --- split day ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("end", "test_share", "first_test_day"),
    [
        (date(2000, 1, 10), 0.3, date(2000, 1, 8)),  # N = 10: floor(7.0) = 7 training days
        (date(2000, 1, 11), 0.3, date(2000, 1, 8)),  # N = 11: floor(7.7) = 7
        (date(2000, 1, 10), 0.25, date(2000, 1, 8)),  # N = 10: floor(7.5) = 7
        (date(2000, 1, 1), 0.3, date(2000, 1, 1)),  # N = 1: floor(0.7) = 0, the whole scope is test
        (date(2000, 3, 30), 0.3, date(2000, 3, 4)),  # N = 90 (2000 is leap): 0.7 * 90 = 63 exactly
        (date(2002, 12, 31), 0.3, date(2002, 2, 6)),  # N = 1096: floor(767.2) = 767
        (date(2000, 1, 10), 0.9, date(2000, 1, 2)),  # N = 10: 0.1 * 10 = 1 exactly
    ],
)
def test_split_day_is_start_plus_floor_of_the_training_share_of_the_calendar_days(end, test_share,
                                                                                 first_test_day):
    assert split_day(date(2000, 1, 1), end, test_share) == first_test_day


def test_query_seed_is_a_64_bit_function_of_the_query_id():
    assert query_seed("q1") == query_seed("q1")
    assert query_seed("q1") != query_seed("q2")
    assert 0 <= query_seed("q1") < 2**64


# --- holdout --------------------------------------------------------------------------------------


def test_holdout_withholds_the_target_from_the_split_day_and_keeps_observed_test_days_as_truth():
    # 10 days from 2000-01-01, test_share 0.3: the test period is 2000-01-08..10. Basin b was not
    # observed on 2000-01-09: that day is owed but not in the truth.
    public_in = series({"a": [1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10],
                        "b": [11.0, 12, 13, 14, 15, 16, 17, 18, NAN, 20]})
    withheld = withhold(HOLDOUT, {"timeseries": public_in}, "gauge_id", date(2000, 1, 1),
                        date(2000, 1, 10), "q1")

    test_days = pd.to_datetime(["2000-01-08", "2000-01-09", "2000-01-10"])
    expected_truth = pd.DataFrame({"gauge_id": ["a", "a", "a", "b", "b"],
                                   "date": test_days[[0, 1, 2, 0, 2]].astype("datetime64[ns]"),
                                   "qobs_mm_d": [8.0, 9.0, 10.0, 18.0, 20.0]})
    pd.testing.assert_frame_equal(withheld.truth, expected_truth, check_dtype=False)
    assert withheld.truth["date"].dtype == "datetime64[ns]"
    expected_required = pd.DataFrame({"gauge_id": ["a"] * 3 + ["b"] * 3,
                                      "date": test_days[[0, 1, 2, 0, 1, 2]].astype("datetime64[ns]")})
    pd.testing.assert_frame_equal(withheld.required, expected_required, check_dtype=False)

    public = withheld.tables["timeseries"]
    assert public["qobs_mm_d"].tolist()[:7] == [1.0, 2, 3, 4, 5, 6, 7]
    assert public["qobs_mm_d"].tolist()[10:17] == [11.0, 12, 13, 14, 15, 16, 17]
    assert public.loc[pd.to_datetime(public["date"]) >= "2000-01-08", "qobs_mm_d"].isna().all()
    assert public["prcp_mm_d"].tolist() == [2.0] * 20  # the forcing stays public on test days
    assert public_in["qobs_mm_d"].iloc[7] == 8.0  # the caller's frame is not modified


def test_holdout_keys_come_back_as_text_and_other_tables_are_passed_through():
    public_in = series({"a": [1.0, 2, 3, 4]}).assign(gauge_id=1013500)
    entities = pd.DataFrame({"gauge_id": [1013500], "huc_02": ["01"]})
    withheld = withhold(HOLDOUT, {"timeseries": public_in, "entities": entities}, "gauge_id",
                        date(2000, 1, 1), date(2000, 1, 4), "q1")
    # N = 4: floor(2.8) = 2 training days, test from 2000-01-03.
    assert withheld.truth["gauge_id"].tolist() == ["1013500", "1013500"]
    assert withheld.truth["qobs_mm_d"].tolist() == [3.0, 4.0]
    assert withheld.required["gauge_id"].tolist() == ["1013500", "1013500"]
    assert withheld.tables["entities"] is entities


# --- hidden gaps ----------------------------------------------------------------------------------

GAPS = TruthSpec(kind="hidden_gaps", column="qobs_mm_d", fraction=0.1, run_days=(5, 30))


def gaps(values: dict[str, list[float]], query_id: str, spec: TruthSpec = GAPS):
    return withhold(spec, {"timeseries": series(values)}, "gauge_id", date(2000, 1, 1),
                    date(2000, 12, 31), query_id)


def test_hidden_gaps_are_deterministic_per_query_id_and_differ_for_another_id():
    flows = {"a": list(np.arange(1.0, 201.0)), "b": list(np.arange(1.0, 201.0))}
    first, again, other = gaps(flows, "q1"), gaps(flows, "q1"), gaps(flows, "q2")
    pd.testing.assert_frame_equal(first.truth, again.truth)
    pd.testing.assert_frame_equal(first.tables["timeseries"], again.tables["timeseries"])
    assert first.truth["date"].tolist() != other.truth["date"].tolist()


@pytest.mark.parametrize("query_id", ["q1", "q2", "q3", "q4", "q5"])
def test_hidden_gaps_hide_about_the_fraction_in_runs_of_at_least_the_shortest_run(query_id):
    # 200 observed days: the target is round(0.1 * 200) = 20 days; drawing stops at the first run
    # that reaches it, so at most 20 + 30 - 1 days are hidden. Runs lie inside the series, so every
    # maximal run of hidden days (overlapping draws merge) is at least 5 days long.
    withheld = gaps({"a": list(np.arange(1.0, 201.0))}, query_id)
    hidden = withheld.tables["timeseries"]["qobs_mm_d"].isna().to_numpy()
    assert 20 <= hidden.sum() <= 49
    assert min(hidden_runs(hidden)) >= 5
    assert len(withheld.truth) == hidden.sum()


def test_each_entity_gets_its_own_share_of_hidden_days():
    withheld = gaps({"a": list(np.arange(1.0, 101.0)), "b": list(np.arange(1.0, 301.0))}, "q1")
    counts = withheld.truth.groupby("gauge_id").size()
    assert 10 <= counts["a"] <= 10 + 29  # round(0.1 * 100) = 10
    assert 30 <= counts["b"] <= 30 + 29  # round(0.1 * 300) = 30


def test_hidden_gaps_truth_holds_only_observed_values_and_required_includes_real_gaps():
    # Basin a has real gaps on days 10-19 and 50-59 (0-based): they are owed (hidden and real gaps
    # look alike) but can never be in the truth.
    flows = np.arange(1.0, 101.0)
    flows[10:20] = NAN
    flows[50:60] = NAN
    withheld = gaps({"a": list(flows)}, "q7")
    dates = pd.Series(days(date(2000, 1, 1), 100))
    real_gaps = set(dates[10:20]) | set(dates[50:60])
    truth_dates = set(withheld.truth["date"])

    assert not truth_dates & real_gaps
    assert withheld.truth["qobs_mm_d"].notna().all()
    # The truth is the original value of each hidden day: day i holds i + 1.
    offsets = (withheld.truth["date"] - pd.Timestamp("2000-01-01")).dt.days
    assert withheld.truth["qobs_mm_d"].tolist() == (offsets + 1.0).tolist()
    assert 8 <= len(truth_dates) <= 8 + 29  # round(0.1 * 80 observed days) = 8

    public = withheld.tables["timeseries"]
    null_days = set(public.loc[public["qobs_mm_d"].isna(), "date"])
    assert null_days == truth_dates | real_gaps
    assert set(withheld.required["date"]) == null_days
    assert len(withheld.required) == len(null_days)
    assert withheld.required.columns.tolist() == ["gauge_id", "date"]


def test_an_entity_without_observations_has_nothing_hidden_but_owes_every_day():
    withheld = gaps({"a": [NAN] * 20}, "q1")
    assert withheld.truth.empty
    assert len(withheld.required) == 20


# --- signatures -----------------------------------------------------------------------------------


def test_signatures_withhold_nothing_and_the_truth_is_one_standardised_row_per_entity():
    # 40 days of constant flow 1 (basin a) and 2 (basin b), precipitation 2: with two basins every
    # signature that differs standardises to -1 / +1, a constant one (baseflow index 1 for both, no
    # high-flow days) to 0.
    public_in = series({"b": [2.0] * 40, "a": [1.0] * 40})
    spec = TruthSpec(kind="signatures", column="qobs_mm_d")
    withheld = withhold(spec, {"timeseries": public_in}, "gauge_id", date(2000, 1, 1),
                        date(2000, 2, 9), "q1")

    assert withheld.tables["timeseries"] is public_in
    assert withheld.truth["gauge_id"].tolist() == ["a", "b"]
    expected = {"log_q_mean": [-1.0, 1.0], "runoff_ratio": [-1.0, 1.0], "baseflow_index": [0.0, 0.0],
                "high_q_freq": [0.0, 0.0], "log_q5": [-1.0, 1.0], "log_q95": [-1.0, 1.0]}
    for column, values in expected.items():
        assert withheld.truth[column].tolist() == pytest.approx(values), column
    pd.testing.assert_frame_equal(withheld.required, pd.DataFrame({"gauge_id": ["a", "b"]}),
                                  check_dtype=False)


# --- the prompt's rule ----------------------------------------------------------------------------


def test_rows_rule_names_the_test_period_or_the_null_days_or_the_entities():
    start, end = date(2000, 1, 1), date(2000, 1, 10)
    assert rows_rule(HOLDOUT, "gauge_id", start, end) == (
        "one row per `gauge_id` of the scope and per day (`date`) from 2000-01-08 to 2000-01-10 "
        "(the test period, where `qobs_mm_d` is withheld)")
    assert "where `qobs_mm_d` is null in `data/`" in rows_rule(GAPS, "gauge_id", start, end)
    assert rows_rule(TruthSpec(kind="signatures", column="qobs_mm_d"), "gauge_id", start, end) == (
        "one row per `gauge_id` of the scope")
