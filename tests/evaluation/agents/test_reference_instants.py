"""reference_models.instants: every spelling of an instant becomes the same naive UTC timestamps."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from stages.evaluation.agents.scripts.reference_models import instants

EXPECTED = pd.Series(pd.to_datetime(["2001-03-04 05:00", "2001-03-05 00:30"]).astype("datetime64[ns]"),
                     name="timestamp")


def test_naive_timestamps_come_back_unchanged_and_as_a_copy():
    naive = EXPECTED.copy()
    result = instants(naive)
    pd.testing.assert_series_equal(result, EXPECTED)
    result.iloc[0] = pd.Timestamp("1999-01-01")
    assert naive.iloc[0] == EXPECTED.iloc[0]  # the caller's column is not changed through the result


def test_aware_text_and_arrow_instants_become_the_same_naive_utc_timestamps():
    aware = EXPECTED.dt.tz_localize("UTC").dt.tz_convert("America/Denver")
    text = pd.Series(["2001-03-04T05:00:00Z", "2001-03-05T00:30:00Z"], name="timestamp")
    arrow = pd.Series(pd.array(aware.to_numpy(), dtype=pd.ArrowDtype(pa.timestamp("ns", tz="UTC"))),
                      name="timestamp")
    for values in (aware, text, arrow):
        pd.testing.assert_series_equal(instants(values), EXPECTED)
