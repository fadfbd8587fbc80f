"""The truth kinds and grading options beyond a daily holdout: years, timestamps, held-out entities,
profiles, labels, graded timescales and quantile ranges, and the baselines that go with them."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
import pytest

from stages.catalog import TaskSpec, TruthSpec
from stages.evaluation.agents.scripts import reference_models as models
from stages.scoring.query import metrics
from stages.scoring.query import truth as truths
from stages.scoring.query.artifacts import read_artifact
from stages.scoring.query.grade import grade_artifact
from stages.scoring.query.truth import held_out, rows_rule, withhold


def yields_table() -> pd.DataFrame:
    rows = [{"adm_id": a, "harvest_year": y, "yield_t_ha": 5.0 + 0.1 * (y - 2000) + i}
            for i, a in enumerate(["A", "B", "C"]) for y in range(2000, 2010)]
    return pd.DataFrame(rows)


def test_a_holdout_on_years_withholds_the_last_calendar_years():
    spec = TruthSpec(kind="holdout", table="yields", column="yield_t_ha", time="harvest_year")
    start, end = date(2000, 1, 1), date(2009, 12, 31)
    assert truths.test_start(spec, start, end) == date(2007, 1, 1)  # 2000 + floor(0.7 * 10)
    withheld = withhold(spec, {"yields": yields_table()}, "adm_id", start, end, "q-1")
    assert sorted(withheld.required["harvest_year"].unique()) == [2007, 2008, 2009]
    assert withheld.required["harvest_year"].dtype == np.int64
    public = withheld.tables["yields"]
    assert public.loc[public["harvest_year"] >= 2007, "yield_t_ha"].isna().all()
    assert public.loc[public["harvest_year"] < 2007, "yield_t_ha"].notna().all()
    assert len(withheld.truth) == 9
    assert "per year (`harvest_year`) from 2007 to 2009" in rows_rule(spec, "adm_id", start, end)


def test_held_out_entities_are_a_seeded_draw_leaving_two_public():
    pool = [f"s{i}" for i in range(10)]
    assert held_out(pool, 0.3, "q-1") == held_out(list(reversed(pool)), 0.3, "q-1")
    assert len(held_out(pool, 0.3, "q-1")) == 3
    assert len(held_out(["a", "b", "c"], 0.9, "q-1")) == 1  # at most n - 2
    assert held_out(["a", "b"], 0.5, "q-1") == []
    assert {tuple(held_out(pool, 0.3, f"q-{i}")) for i in range(20)} != {tuple(held_out(pool, 0.3, "q-1"))}


def test_a_held_out_entities_truth_withholds_every_step_of_the_drawn_entities():
    spec = TruthSpec(kind="held_out_entities", table="yields", column="yield_t_ha", time="harvest_year",
                     test_share=0.34)
    start, end = date(2000, 1, 1), date(2009, 12, 31)
    withheld = withhold(spec, {"yields": yields_table()}, "adm_id", start, end, "q-7", ["A", "B", "C"])
    drawn = held_out(["A", "B", "C"], 0.34, "q-7")
    assert sorted(withheld.required["adm_id"].unique()) == drawn and len(withheld.required) == 10
    public = withheld.tables["yields"]
    assert public.loc[public["adm_id"].isin(drawn), "yield_t_ha"].isna().all()
    assert public.loc[~public["adm_id"].isin(drawn), "yield_t_ha"].notna().all()


def test_time_zone_aware_timestamps_match_naive_utc_artifacts():
    times = pd.date_range("2020-06-01", periods=96, freq="30min", tz="UTC")
    series = pd.DataFrame({"site_id": "S1", "timestamp_start": times, "fch4": np.arange(96.0)})
    spec = TruthSpec(kind="holdout", table="halfhourly", column="fch4", time="timestamp_start",
                     test_share=0.5)
    withheld = withhold(spec, {"halfhourly": series}, "site_id", date(2020, 6, 1), date(2020, 6, 2), "q")
    assert withheld.required["timestamp_start"].iloc[0] == pd.Timestamp("2020-06-02 00:00")
    task = TaskSpec.model_validate(_task("holdout", spec.model_dump(), "rmse", "lower is better"))
    naive = withheld.required.assign(fch4_hat=np.arange(48.0, 96.0))
    frame = read_artifact(naive.to_parquet(), task.artifact, withheld.required)
    assert grade_artifact(task, frame, withheld.truth, "site_id").values == {"m": 0.0}


def _task(kind: str, truth: dict, function: str, target: str, **grade) -> dict:
    key = ["site_id"] if kind in ("profiles", "labels") else ["site_id", truth.get("time", "date")]
    return {
        "id": "t", "domain": "d", "category": "clustering", "difficulty": "easy", "modalities": [],
        "source": {"citation": "c"}, "prompt": "p", "data": {"repository": "r", "tables": {}},
        "scopes": [], "truth": truth,
        "artifact": {"file": "a.parquet", "key": key, "columns": {"fch4_hat": "float", "label": "int"}
                     if kind in ("profiles", "labels") else {"fch4_hat": "float"}},
        "answer": {"metrics": [{"name": "m", "description": "d", "target": target,
                                "grade": {"function": function,
                                          "column": "label" if kind in ("profiles", "labels") else "fch4_hat",
                                          **grade}}]},
    }


def test_labels_are_removed_from_the_public_entities_and_graded_by_adjusted_rand():
    entities = pd.DataFrame({"site_id": ["a", "b", "c", "d"], "component": ["x", "x", "y", "y"],
                             "size": [1.0, 2.0, 3.0, 4.0]})
    spec = TruthSpec(kind="labels", table="entities", column="component")
    withheld = withhold(spec, {"entities": entities}, "site_id", date(2000, 1, 1), date(2000, 1, 2), "q")
    assert "component" not in withheld.tables["entities"].columns
    task = TaskSpec.model_validate(_task("labels", spec.model_dump(), "adjusted_rand", "higher is better"))
    same = withheld.required.assign(fch4_hat=0.0, label=[7, 7, 3, 3])
    crossed = withheld.required.assign(fch4_hat=0.0, label=[1, 2, 1, 2])
    assert grade_artifact(task, same, withheld.truth, "site_id").values == {"m": 1.0}
    assert grade_artifact(task, crossed, withheld.truth, "site_id").values["m"] < 0


def test_profiles_truth_is_the_standardised_feature_space():
    times = pd.date_range("2020-01-01", periods=40, freq="D")
    series = pd.concat([pd.DataFrame({"site_id": s, "date": times, "f": level + np.zeros(40)})
                        for s, level in [("a", 1.0), ("b", 1.0), ("c", 3.0)]])
    spec = TruthSpec(kind="profiles", column="f", features=["mean", "std"])
    withheld = withhold(spec, {"timeseries": series}, "site_id", date(2020, 1, 1), date(2020, 2, 9), "q")
    np.testing.assert_allclose(withheld.truth["mean"], [-np.sqrt(0.5), -np.sqrt(0.5), np.sqrt(2)])
    assert (withheld.truth["std"] == 0).all()
    with pytest.raises(ValueError, match="profiles truth needs features"):
        TruthSpec(kind="profiles", column="f", features=["median"])


def test_graded_timescale_and_quantile_range_select_the_rows_the_metric_sees():
    dates = pd.date_range("2020-01-01", "2020-02-29", freq="D")
    obs = np.arange(len(dates), dtype=float)
    truth = pd.DataFrame({"site_id": "a", "date": dates, "q": obs})
    alternating = np.where(np.arange(len(dates)) % 2 == 0, 1.0, -1.0)
    artifact = truth[["site_id", "date"]].assign(fch4_hat=obs + alternating)
    spec = {"kind": "holdout", "column": "q"}
    daily = TaskSpec.model_validate(_task("holdout", spec, "mae", "lower is better"))
    monthly = TaskSpec.model_validate(_task("holdout", spec, "mae", "lower is better",
                                            timescale="month"))
    top = TaskSpec.model_validate(_task("holdout", spec, "mae", "lower is better", obs_quantile=[0.9, 1.0]))
    assert grade_artifact(daily, artifact, truth, "site_id").values == {"m": 1.0}
    # monthly means: January's 31 alternating errors sum to +1, February's 29 (from -1) to -1
    expected = (1 / 31 + 1 / 29) / 2
    assert grade_artifact(monthly, artifact, truth, "site_id").values["m"] == pytest.approx(expected)
    assert grade_artifact(top, artifact, truth, "site_id").values == {"m": 1.0}
    assert metrics.variability_error([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)
    assert metrics.bias_ratio_error([1.0, 2.0, 3.0], [1.5, 3.0, 4.5]) == pytest.approx(0.5)


def test_mds_restores_a_daily_cycle_and_nearest_entity_copies_the_closest_site():
    times = pd.date_range("2020-01-01", periods=48 * 20, freq="30min")
    cycle = np.sin(np.arange(len(times)) * 2 * np.pi / 48) + 5
    series = pd.DataFrame({"site_id": "A", "timestamp_start": times, "f": cycle})
    series.loc[100:150, "f"] = np.nan
    scope = {"entity_key": "site_id", "entities": ["A"], "start": "2020-01-01", "end": "2020-01-20"}
    artifact = {"columns": {"f_hat": "float"},
                "rows": {"kind": "hidden_gaps", "table": "hh", "time": "timestamp_start", "column": "f"}}
    tables = models.load_tables({"hh": series}, scope)
    required = models.required_rows(tables, scope, artifact)
    np.testing.assert_allclose(models.mds(tables, scope, artifact, required)["f_hat"], cycle[100:151])

    days = pd.date_range("2020-01-01", periods=3, freq="D")
    daily = pd.DataFrame({"site_id": np.repeat(["near", "far", "x"], 3), "date": np.tile(days, 3),
                          "f": [1.0, 2.0, 3.0, 10.0, 20.0, 30.0, np.nan, np.nan, np.nan]})
    entities = pd.DataFrame({"site_id": ["near", "far", "x"], "lat_deg": [50.0, 10.0, 51.0],
                             "lon_deg": [5.0, 5.0, 5.0]})
    scope = {"entity_key": "site_id", "entities": ["far", "near", "x"], "start": "2020-01-01",
             "end": "2020-01-03"}
    artifact = {"columns": {"f_hat": "float"},
                "rows": {"kind": "held_out_entities", "column": "f", "entities": ["x"]}}
    tables = models.load_tables({"timeseries": daily, "entities": entities}, scope)
    required = models.required_rows(tables, scope, artifact)
    assert models.nearest_entity(tables, scope, artifact, required)["f_hat"].tolist() == [1.0, 2.0, 3.0]
    assert models.pooled_climatology(tables, scope, artifact, required)["f_hat"].notna().all()


def test_huge_finite_values_make_a_metric_undefined_not_a_crash():
    dates = pd.date_range("2020-01-01", periods=10, freq="D")
    truth = pd.DataFrame({"site_id": np.repeat(["a", "b"], 5), "date": np.tile(dates[:5], 2),
                          "q": np.arange(10.0)})
    huge = truth[["site_id", "date"]].assign(fch4_hat=1e200 * np.arange(1.0, 11.0))
    for function, aggregate in [("kge", "median"), ("nse", "median"), ("rmse", "pooled"), ("r2", "pooled")]:
        target = "lower is better" if function == "rmse" else "higher is better"
        task = TaskSpec.model_validate(_task("holdout", {"kind": "holdout", "column": "q"}, function, target,
                                             aggregate=aggregate))
        grades = grade_artifact(task, huge, truth, "site_id")
        assert grades.values == {"m": None}, function
        assert "too large" in grades.undefined["m"] or "no entity" in grades.undefined["m"], function


def test_an_artifact_column_named_like_the_hidden_label_is_graded():
    entities = pd.DataFrame({"site_id": ["a", "b", "c", "d"], "component": ["x", "x", "y", "y"]})
    spec = TruthSpec(kind="labels", table="entities", column="component")
    withheld = withhold(spec, {"entities": entities}, "site_id", date(2000, 1, 1), date(2000, 1, 2), "q")
    raw = _task("labels", spec.model_dump(), "adjusted_rand", "higher is better")
    raw["artifact"]["columns"] = {"component": "int"}
    raw["answer"]["metrics"][0]["grade"]["column"] = "component"
    task = TaskSpec.model_validate(raw)
    handed_in = withheld.required.assign(component=[5, 5, 6, 6])
    assert grade_artifact(task, handed_in, withheld.truth, "site_id").values == {"m": 1.0}
