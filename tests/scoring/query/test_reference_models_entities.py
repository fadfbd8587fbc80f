"""Reference models fitted to many entities at once: each entity keeps to its own rows and times of day."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest
from scibench_testing.graded import days

from stages.evaluation.agents.scripts import reference_models as models

NAN = float("nan")
TARGET = "qobs_mm_d"
ARTIFACT = {"columns": {"qsim_mm_d": "float"}, "rows": {"kind": "hidden_gaps", "column": TARGET}}
YIELDS = {"columns": {"yield_fill": "float"},
          "rows": {"kind": "hidden_gaps", "column": "yield_t_ha", "table": "yields", "time": "harvest_year"}}


def scope(entities: list[str]) -> dict:
    return {"entity_key": "gauge_id", "entities": entities, "start": "2000-01-01", "end": "2003-12-31"}


def owed(rows: list[tuple[str, str]]) -> pd.DataFrame:
    return pd.DataFrame({"gauge_id": [e for e, _ in rows], "date": pd.to_datetime([t for _, t in rows])})


def test_mds_averages_the_entitys_own_values_at_the_same_time_of_day():
    # Half-hourly slots 00:00 and 12:00 on 2000-01-01..10. a: day d at 00:00 (day 5 withheld), 0.5 at
    # 12:00; b: 200 at 00:00, 100 + d at 12:00; c: no value at all.
    stamps = [pd.Timestamp(2000, 1, d, h) for d in range(1, 11) for h in (0, 12)]
    a = [NAN if (d, h) == (5, 0) else (float(d) if h == 0 else 0.5) for d in range(1, 11) for h in (0, 12)]
    b = [200.0 if h == 0 else 100.0 + d for d in range(1, 11) for h in (0, 12)]
    series = pd.DataFrame({"gauge_id": ["a"] * 20 + ["b"] * 20 + ["c"] * 2, "date": stamps * 2 + stamps[:2],
                           TARGET: a + b + [NAN, NAN]})
    frame = models.mds({"timeseries": series}, scope(["a", "b", "c"]), ARTIFACT,
                       owed([("a", "2000-01-05 00:00"), ("b", "2000-01-20 12:00"), ("b", "2000-01-03 06:00"),
                             ("c", "2000-01-01 00:00")]))
    assert frame["qsim_mm_d"].tolist() == [
        50 / 9,  # a's 00:00 values within 7 days: 1..10 but 5 (not b's 200, not a's 12:00 0.5)
        108.0,  # none within 7 days; within 14: b's 12:00 values on days 6..10
        152.75,  # no 06:00 value: b's mean (2000 + 1055) / 20
        3110 / 39,  # c has no value: the mean of every public value
    ]


def test_interpolate_and_persistence_hold_each_entitys_ends():
    # a: 1 then two nulls; b: null, 5, null, 9; c: no value. Rows of a and b meet: an end of one
    # entity is never drawn towards the other's values.
    series = pd.DataFrame({"gauge_id": list("aaabbbbcc"), "date": days(date(2000, 1, 1), 3) + days(date(2000, 1, 1), 4)
                           + days(date(2000, 1, 1), 2), TARGET: [1.0, NAN, NAN, NAN, 5.0, NAN, 9.0, NAN, NAN]})
    required = series.loc[series[TARGET].isna(), ["gauge_id", "date"]].reset_index(drop=True)
    interpolated = models.interpolate({"timeseries": series}, scope(["a", "b", "c"]), ARTIFACT, required)
    carried = models.persistence({"timeseries": series}, scope(["a", "b", "c"]), ARTIFACT, required)
    assert interpolated["qsim_mm_d"].tolist() == [1.0, 1.0, 5.0, 7.0, 0.0, 0.0]
    assert carried["qsim_mm_d"].tolist() == [1.0, 1.0, 5.0, 5.0, 5.0, 5.0]  # c: the mean of every value


def test_annual_climatology_and_trend_per_entity_by_year():
    # a: 2 (2001), 4 (2002), 2003 withheld; b: 10 (2001), 2002 withheld, 14 (2003); c: no yield.
    yields = pd.DataFrame({"gauge_id": ["a"] * 3 + ["b"] * 3 + ["c"], "harvest_year": [2001, 2002, 2003] * 2 + [2002],
                           "yield_t_ha": [2.0, 4.0, NAN, 10.0, NAN, 14.0, NAN]})
    required = pd.DataFrame({"gauge_id": ["a", "b", "c"], "harvest_year": [2003, 2002, 2002]})
    tables, where = {"yields": yields}, scope(["a", "b", "c"])
    own = models.climatology(tables, where, YIELDS, required)["yield_fill"].tolist()
    pooled = models.pooled_climatology(tables, where, YIELDS, required)["yield_fill"].tolist()
    trend = models.linear_trend(tables, where, YIELDS, required)["yield_fill"].tolist()
    assert own == [3.0, 12.0, 4.0]  # the entity's mean without that year; c: every entity's 2002 mean
    assert pooled == [14.0, 4.0, 4.0]  # every entity's mean in that year
    assert trend[:2] == pytest.approx([6.0, 12.0], abs=1e-9)  # the entity's line (365 days between years)
    assert trend[2] == 7.5  # c: the mean of every yield


def test_nearest_entity_takes_the_nearest_other_entitys_value_or_its_mean():
    # On the equator: a at longitude 0, b at 1, c at 3. a: 1, 2, null, null; b: 10, null, null, 20; c: no value.
    entities = pd.DataFrame({"gauge_id": ["a", "b", "c"], "lat_deg": [0.0, 0.0, 0.0], "lon_deg": [0.0, 1.0, 3.0]})
    series = pd.DataFrame({"gauge_id": list("aaaabbbbcccc"), "date": days(date(2000, 1, 1), 4) * 3,
                           TARGET: [1.0, 2.0, NAN, NAN, 10.0, NAN, NAN, 20.0, NAN, NAN, NAN, NAN]})
    required = owed([("a", "2000-01-03"), ("b", "2000-01-02"), ("c", "2000-01-01"), ("c", "2000-01-02")])
    frame = models.nearest_entity({"timeseries": series, "entities": entities}, scope(["a", "b", "c"]), ARTIFACT,
                                  required)
    assert frame["qsim_mm_d"].tolist() == [15.0, 2.0, 10.0, 15.0]  # a's and c's donor is b, b's is a
