"""The benchmark's signature space, computed by hand on tiny series."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pandas as pd
import pytest
from scibench_testing.graded import days

from stages.scoring.query.signatures import SIGNATURE_DEFINITIONS, baseflow_index, basin_signatures, signature_space

NAN = float("nan")


def test_baseflow_index_follows_the_one_pass_filter_and_clips_quick_flow_at_zero():
    # alpha 0.5, (1 + alpha) / 2 = 0.75. f1 = 0.75 * 2 = 1.5; f2 = 0.75 - 1.5 = -0.75 -> 0;
    # f3 = 0 + 0.75 = 0.75. BFI = (7 - 2.25) / 7. Without the clip f3 would be 0.375.
    assert baseflow_index(np.array([1.0, 3.0, 1.0, 2.0]), alpha=0.5) == pytest.approx(4.75 / 7)


def test_baseflow_index_of_a_constant_flow_is_one():
    assert baseflow_index(np.full(10, 3.0)) == 1.0


def test_basin_signatures_by_hand_with_a_gap():
    # Observed flow 1, 3, 2, 10 (day 2 is a gap, its precipitation 100 is not counted).
    flow = pd.Series([1.0, NAN, 3.0, 2.0, 10.0])
    prcp = pd.Series([2.0, 100.0, 2.0, 2.0, 4.0])
    # Lyne-Hollick on the gap-filled series 1, 2, 3, 2, 10 with alpha 0.925, c = 0.9625.
    alpha, c = 0.925, 0.9625
    f1 = c * 1
    f2 = alpha * f1 + c * 1
    f3 = alpha * f2 - c
    f4 = alpha * f3 + c * 8
    expected = {
        "log_q_mean": math.log(4.0),
        "runoff_ratio": 4.0 / 2.5,
        "baseflow_index": (18 - (f1 + f2 + f3 + f4)) / 18,
        "high_q_freq": 0.0,  # median 2.5: nothing above 22.5
        "log_q5": math.log(0.01 + 1.15),  # linear quantile of 1, 2, 3, 10 at position 0.15
        "log_q95": math.log(0.01 + 8.95),  # at position 2.85: 3 + 0.85 * 7
    }
    assert basin_signatures(flow, prcp) == pytest.approx(expected)


def test_high_flow_frequency_counts_days_above_nine_times_the_median_per_year():
    flow = pd.Series([1.0, 1.0, 1.0, 1.0, 9.0, 20.0])  # median 1: only 20 > 9 (9 is not above)
    signatures = basin_signatures(flow, pd.Series([1.0] * 6))
    assert signatures["high_q_freq"] == pytest.approx(1 / 6 * 365.25)


def timeseries(flows: dict[str, list[float]]) -> pd.DataFrame:
    return pd.concat([pd.DataFrame({"gauge_id": entity, "date": days(date(2000, 1, 1), len(values)),
                                    "prcp_mm_d": 4.0, "qobs_mm_d": values})
                      for entity, values in flows.items()], ignore_index=True)


def test_the_space_is_standardised_across_basins_with_the_population_sd_sorted_by_basin():
    # Constant flows 1, 2, 4 mm/d (40 days each): log_q_mean = ln 1, ln 2, ln 4 = 0, L, 2L is
    # standardised to -1.2247, 0, 1.2247 (population sd of (0, 1, 2) is sqrt(2/3)).
    space = signature_space(timeseries({"c": [4.0] * 40, "a": [1.0] * 40, "b": [2.0] * 40}),
                            "gauge_id", "qobs_mm_d", "prcp_mm_d")
    assert space.index.tolist() == ["a", "b", "c"]
    assert space.index.name == "gauge_id"
    assert space.columns.tolist() == list(SIGNATURE_DEFINITIONS)
    z = 1 / math.sqrt(2 / 3)
    assert space["log_q_mean"].tolist() == pytest.approx([-z, 0.0, z])
    # runoff ratio 0.25, 0.5, 1: mean 7/12, population sd sqrt(((1/3)^2 + (1/12)^2 + (5/12)^2) / 3)
    sd = math.sqrt(((1 / 3) ** 2 + (1 / 12) ** 2 + (5 / 12) ** 2) / 3)
    assert space["runoff_ratio"].tolist() == pytest.approx([(-1 / 3) / sd, (-1 / 12) / sd, (5 / 12) / sd])
    # Zero spread (every constant flow has BFI 1 and no high-flow day): 0, not NaN.
    assert space["baseflow_index"].tolist() == [0.0, 0.0, 0.0]
    assert space["high_q_freq"].tolist() == [0.0, 0.0, 0.0]


def test_a_basin_with_fewer_than_30_observed_days_has_no_signatures():
    flows = {"a": [1.0] * 40, "b": [2.0] * 29 + [NAN] * 11}
    with pytest.raises(ValueError, match="gauge_id b: fewer than 30 observed days of qobs_mm_d"):
        signature_space(timeseries(flows), "gauge_id", "qobs_mm_d", "prcp_mm_d")
    flows["b"][29] = 2.0  # 30 observed days are enough
    assert len(signature_space(timeseries(flows), "gauge_id", "qobs_mm_d", "prcp_mm_d")) == 2
