"""Reference models (stages/evaluation/agents/scripts/reference_models/) and their grading at build time."""

from __future__ import annotations

import json
from datetime import date

import numpy as np
import pandas as pd
import pytest
from scibench_testing.graded import CLUSTERS, PREDICTIONS, days, graded_task, metric

from stages.catalog import TruthSpec
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.evaluation.agents.scripts import reference_models as models
from stages.scoring.query import references
from stages.scoring.query.references import grade_references
from stages.scoring.query.truth import withhold

NAN = float("nan")
TARGET = "qobs_mm_d"
FLOAT_ARTIFACT = {"columns": {"qsim_mm_d": "float"}, "rows": {"kind": "holdout", "column": TARGET}}
LABEL_ARTIFACT = {"columns": {"cluster": "int"}, "rows": {"kind": "entities", "column": TARGET}}


def scope(entities: list[str], start: date = date(2000, 1, 1), end: date = date(2003, 12, 31)) -> dict:
    return {"entity_key": "gauge_id", "entities": entities, "start": start.isoformat(), "end": end.isoformat()}


def required(rows: list[tuple[str, str]]) -> pd.DataFrame:
    return pd.DataFrame({"gauge_id": [e for e, _ in rows], "date": pd.to_datetime([d for _, d in rows])})


# --- climatology ----------------------------------------------------------------------------------


def test_climatology_is_the_31_day_circular_mean_of_the_day_of_year_means():
    # Two non-leap years: value = day of year in 2001 and day of year + 2 in 2002, so the mean of
    # each day of year d is d + 1 (day 366 has none). The window of d is d - 15 .. d + 15 around
    # a 366-day circle, days without a mean left out.
    dates = pd.date_range("2001-01-01", "2002-12-31")
    flows = dates.dayofyear + np.where(dates.year == 2002, 2.0, 0.0)
    series = pd.DataFrame({"gauge_id": "a", "date": dates, TARGET: flows.astype(float)})
    owed = required([("a", "2003-04-10"), ("a", "2003-01-01"), ("a", "2003-12-31")])
    frame = models.climatology({"timeseries": series}, scope(["a"]), FLOAT_ARTIFACT, owed)
    expected = [
        101.0,  # day 100: days 85..115, means 86..116
        (sum(range(353, 367)) + sum(range(2, 18))) / 30,  # day 1: days 352..365 and 1..16
        (sum(range(351, 367)) + sum(range(2, 16))) / 30,  # day 365: days 350..365 and 1..14
    ]
    assert frame["qsim_mm_d"].tolist() == pytest.approx(expected)
    assert frame[["gauge_id", "date"]].equals(owed)


def test_climatology_uses_only_public_values_and_falls_back_to_the_entitys_mean():
    # Basin b was observed on 2001-01-01..10 only (values 1..10); its other days are null (withheld).
    dates = pd.date_range("2001-01-01", "2001-12-31")
    flows = np.full(len(dates), NAN)
    flows[:10] = np.arange(1.0, 11.0)
    series = pd.DataFrame({"gauge_id": "b", "date": dates, TARGET: flows})
    owed = required([("b", "2001-07-01"), ("b", "2001-01-20")])
    frame = models.climatology({"timeseries": series}, scope(["b"]), FLOAT_ARTIFACT, owed)
    # Day 182 has no mean within 15 days: the basin's mean 5.5. Day 20: days 5..35 hold 5..10.
    assert frame["qsim_mm_d"].tolist() == [5.5, 7.5]


# --- interpolate ----------------------------------------------------------------------------------


def test_interpolate_is_exact_on_a_linear_ramp_and_holds_the_ends_per_entity():
    # a: 2t + 1 with nulls at t = 0 (held: 3), 3..5 (7, 9, 11) and 9 (held: 17). b: constant 100.
    ramp = [NAN, 3.0, 5.0, NAN, NAN, NAN, 13.0, 15.0, 17.0, NAN]
    series = pd.DataFrame({"gauge_id": ["a"] * 10 + ["b"] * 10, "date": days(date(2000, 1, 1), 10) * 2,
                           TARGET: ramp + [NAN] + [100.0] * 9})
    owed = series.loc[series[TARGET].isna(), ["gauge_id", "date"]].reset_index(drop=True)
    frame = models.interpolate({"timeseries": series}, scope(["a", "b"]), FLOAT_ARTIFACT, owed)
    assert frame["qsim_mm_d"].tolist() == [3.0, 7.0, 9.0, 11.0, 17.0, 100.0]


# --- linear forcing -------------------------------------------------------------------------------


def test_linear_forcing_recovers_a_target_linear_in_the_same_days_forcing():
    # q = 0.5 + 2 prcp - 0.3 tmax on 20 training days; the 5 test days are predicted exactly, a
    # negative prediction is clipped to 0.
    rng = np.random.default_rng(0)
    prcp, tmax = rng.uniform(1, 10, 25), rng.uniform(-5, 5, 25)  # q >= 0.5 + 2 - 1.5 = 1
    prcp[24], tmax[24] = 0.0, 20.0  # 0.5 - 6 < 0
    truth = 0.5 + 2 * prcp - 0.3 * tmax
    series = pd.DataFrame({"gauge_id": "a", "date": days(date(2000, 1, 1), 25), "prcp_mm_d": prcp,
                           "tmax_c": tmax, "swe_mm": rng.uniform(0, 1, 25),
                           TARGET: np.r_[truth[:20], [NAN] * 5]})
    owed = series.loc[20:, ["gauge_id", "date"]].reset_index(drop=True)
    frame = models.linear_forcing({"timeseries": series}, scope(["a"]), FLOAT_ARTIFACT, owed)
    assert frame["qsim_mm_d"].tolist() == pytest.approx([*truth[20:24], 0.0], abs=1e-9)


# --- partitions -----------------------------------------------------------------------------------


def test_region_partition_labels_each_entity_by_its_sorted_region():
    entities = pd.DataFrame({"gauge_id": ["a", "b", "c"], "huc_02": ["03", "01", "03"]})
    owed = pd.DataFrame({"gauge_id": ["a", "b", "c"]})
    frame = models.region_partition({"entities": entities}, scope(["a", "b", "c"]), LABEL_ARTIFACT, owed)
    assert frame["cluster"].tolist() == [1, 0, 1]
    assert frame["cluster"].dtype == int


def test_mean_flow_split_puts_entities_above_the_median_mean_in_cluster_one():
    series = pd.DataFrame({"gauge_id": ["a", "a", "b", "b", "c", "c", "d", "d"],
                           TARGET: [1.0, 1.0, 4.0, NAN, 2.0, 2.0, 3.0, 3.0]})
    owed = pd.DataFrame({"gauge_id": ["a", "b", "c", "d"]})  # means 1, 4, 2, 3: median 2.5
    frame = models.mean_flow_split({"timeseries": series}, scope(list("abcd")), LABEL_ARTIFACT, owed)
    assert frame["cluster"].tolist() == [0, 1, 0, 1]


# --- the agent and the harness agree on the rows owed ---------------------------------------------

START, END = date(2000, 1, 1), date(2000, 2, 9)  # 40 days
KINDS = {
    "holdout": (TruthSpec(kind="holdout", column=TARGET, test_share=0.3), PREDICTIONS),
    "hidden_gaps": (TruthSpec(kind="hidden_gaps", column=TARGET, fraction=0.2, run_days=(3, 6)), PREDICTIONS),
    "signatures": (TruthSpec(kind="signatures", column=TARGET), CLUSTERS),
}


def public_series() -> pd.DataFrame:
    """Two basins x 40 days with real gaps, and a third basin outside the scope."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"gauge_id": np.repeat(["01", "02", "99"], 40),
                          "date": days(START, 40) * 3, "prcp_mm_d": rng.uniform(1, 5, 120),
                          TARGET: rng.uniform(0.5, 3, 120)})
    frame.loc[[5, 6, 33, 50], TARGET] = NAN
    return frame


@pytest.mark.parametrize("kind", list(KINDS))
def test_required_rows_from_the_prompt_match_the_rows_the_harness_owes(kind):
    truth, artifact = KINDS[kind]
    metrics = [metric("m", "silhouette", "cluster")] if kind == "signatures" else [metric("m", "rmse", "qsim_mm_d")]
    task = graded_task(metrics, artifact=artifact, truth=truth)
    resolved = ResolvedScope("s", "temporal", "two basins", "", "gauge_id", ("01", "02"), START, END)
    prompt = render_prompt(task, resolved)
    block, scope_block = models.read_block(prompt, "Artifact"), models.read_block(prompt, "Scope")

    series = public_series()
    in_scope = series[series["gauge_id"].isin(["01", "02"])].reset_index(drop=True)
    withheld = withhold(truth, {"timeseries": in_scope}, "gauge_id", START, END, "query-1")
    # The agent sees the public tables (with the out-of-scope basin, as a careless stager might).
    public = {"timeseries": pd.concat([withheld.tables["timeseries"], series[series["gauge_id"] == "99"]])}
    owed = models.required_rows(models.load_tables(public, scope_block), scope_block, block)

    def ordered(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.sort_values(list(frame.columns)).reset_index(drop=True)

    pd.testing.assert_frame_equal(ordered(owed), ordered(withheld.required), check_dtype=False)
    assert len(owed) == {"holdout": 2 * 12, "signatures": 2}.get(kind, len(owed))


# --- graded at build time -------------------------------------------------------------------------


def test_reference_models_are_graded_against_the_truth_like_any_artifact():
    # A linear ramp with hidden gaps: interpolation fills it exactly (RMSE 0); climatology does not.
    truth = TruthSpec(kind="hidden_gaps", column=TARGET, fraction=0.2, run_days=(3, 6))
    task = graded_task([metric("rmse", "rmse", "qsim_mm_d", target="lower is better",
                               references=("interpolate", "climatology"))],
                       truth=truth, reference_models=("interpolate", "climatology"))
    series = pd.DataFrame({"gauge_id": "01", "date": days(START, 40), TARGET: np.arange(1.0, 41.0)})
    withheld = withhold(truth, {"timeseries": series}, "gauge_id", START, END, "query-1")
    block = {"columns": {"qsim_mm_d": "float"}, "rows": {"kind": "hidden_gaps", "column": TARGET}}
    values = grade_references(task, withheld.tables, scope(["01"], START, END), block, withheld.required,
                              withheld.truth)
    # The named models first, then every other value model (partitions are not graded on values),
    # then the mean of every pair of them in `MODELS` order.
    singles = ["interpolate", "climatology", "pooled_climatology", "linear_forcing", "persistence",
               "linear_trend", "mds"]
    ordered = [m for m in models.MODELS if m in singles]
    pairs = [f"{a}+{b}" for i, a in enumerate(ordered) for b in ordered[i + 1:]]
    assert list(values) == [*singles, *pairs, "_not_applicable"]
    assert len(pairs) == 21
    assert values["interpolate"]["rmse"] == pytest.approx(0.0, abs=1e-12)
    assert values["climatology"]["rmse"] > 1.0
    assert values["linear_trend"]["rmse"] == pytest.approx(0.0, abs=1e-9)  # a ramp is a trend too
    assert values["_not_applicable"] == {"nearest_entity": "KeyError: 'entities'"}  # no coordinates
    json.dumps(values)  # stored as references.json


def test_a_named_model_that_cannot_be_applied_stops_the_query():
    truth = TruthSpec(kind="hidden_gaps", column=TARGET, fraction=0.2, run_days=(3, 6))
    task = graded_task([metric("rmse", "rmse", "qsim_mm_d", target="lower is better",
                               references=("nearest_entity",))],
                       truth=truth, reference_models=("nearest_entity",))
    series = pd.DataFrame({"gauge_id": "01", "date": days(START, 40), TARGET: np.arange(1.0, 41.0)})
    withheld = withhold(truth, {"timeseries": series}, "gauge_id", START, END, "query-1")
    block = {"columns": {"qsim_mm_d": "float"}, "rows": {"kind": "hidden_gaps", "column": TARGET}}
    with pytest.raises(KeyError, match="entities"):
        grade_references(task, withheld.tables, scope(["01"], START, END), block, withheld.required,
                         withheld.truth)


def test_a_partition_task_grades_the_partition_models_only():
    task = graded_task([metric("silhouette", "silhouette", "cluster")], artifact=CLUSTERS,
                       truth=TruthSpec(kind="signatures", column=TARGET), reference_models=("mean_flow_split",))
    assert references._same_kind(task) == ["region_partition", "mean_flow_split"]


def test_the_mean_of_two_reference_models_is_graded_and_can_beat_both():
    # Two models whose errors are opposite: each is 1 off on every day, their mean is exact.
    truth = pd.DataFrame({"gauge_id": "01", "date": days(START, 4), TARGET: [0.0, 0.0, 0.0, 0.0]})
    first = truth[["gauge_id", "date"]].assign(qsim_mm_d=[1.0, -1.0, 1.0, -1.0])
    second = truth[["gauge_id", "date"]].assign(qsim_mm_d=[-1.0, 1.0, -1.0, 1.0])
    third = truth[["gauge_id", "date"]].assign(qsim_mm_d=[2.0, 2.0, 2.0, 2.0])
    out = references.blends({"mds": third, "climatology": first, "persistence": second}, ["qsim_mm_d"])
    assert list(out) == ["climatology+persistence", "climatology+mds", "persistence+mds"]
    assert out["climatology+persistence"]["qsim_mm_d"].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert out["climatology+mds"]["qsim_mm_d"].tolist() == [1.5, 0.5, 1.5, 0.5]
    pd.testing.assert_frame_equal(out["persistence+mds"][["gauge_id", "date"]], truth[["gauge_id", "date"]])
    assert first["qsim_mm_d"].tolist() == [1.0, -1.0, 1.0, -1.0]  # the inputs are left alone


def test_a_partition_task_grades_no_blends():
    truth = TruthSpec(kind="signatures", column=TARGET)
    task = graded_task([metric("silhouette", "silhouette", "cluster")], artifact=CLUSTERS, truth=truth,
                       reference_models=("mean_flow_split",))
    series = public_series()
    in_scope = series[series["gauge_id"].isin(["01", "02"])].reset_index(drop=True)
    withheld = withhold(truth, {"timeseries": in_scope}, "gauge_id", START, END, "query-1")
    entities = pd.DataFrame({"gauge_id": ["01", "02"], "huc_02": ["01", "02"]})
    values = grade_references(task, {**withheld.tables, "entities": entities}, scope(["01", "02"], START, END),
                              LABEL_ARTIFACT, withheld.required, withheld.truth)
    assert not [name for name in values if "+" in name]
