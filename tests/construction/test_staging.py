"""Staging one query: public files hold only its scope with the target withheld; truth stays private."""

from __future__ import annotations

import itertools
import json
import stat
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stages.catalog import load_task
from stages.construction.drawing import Query
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.construction.staging import scoped_tables, stage_queries, stage_query, stage_task
from stages.evaluation.agents.scripts.reference_models import MODELS, PARTITIONS
from stages.tables import Table

CAMELS = Path(__file__).resolve().parents[2] / "catalog" / "camels"
START, END = date(2000, 1, 11), date(2000, 2, 19)  # 40 days; holdout test period from 2000-02-08
BASINS = ("01", "02")


SINGLE_MODELS = [m for m in MODELS if m not in PARTITIONS and m != "nearest_entity"]  # no coordinates here
VALUE_MODELS = sorted(["_not_applicable", *SINGLE_MODELS,
                       *(f"{a}+{b}" for a, b in itertools.combinations(SINGLE_MODELS, 2))])


def repository() -> list[Table]:
    """Three basins x 91 days (2000-01-01..03-31) of forcing and streamflow, with real gaps."""
    rng = np.random.default_rng(5)
    dates = pd.date_range("2000-01-01", "2000-03-31")
    frame = pd.DataFrame({"gauge_id": np.repeat(["01", "02", "03"], len(dates)),
                          "date": np.tile(dates, 3), "prcp_mm_d": rng.uniform(0, 5, 3 * len(dates)),
                          "tmax_c": rng.uniform(-5, 20, 3 * len(dates)),
                          "qobs_mm_d": rng.uniform(0.5, 3, 3 * len(dates))})
    frame.loc[[20, 21, 140], "qobs_mm_d"] = np.nan
    entities = pd.DataFrame({"gauge_id": ["01", "02", "03"], "huc_02": ["01", "01", "03"]})
    units = {"prcp_mm_d": "mm/d", "tmax_c": "degC", "qobs_mm_d": "mm/d"}
    return [Table("timeseries", frame, ("gauge_id", "date"), units),
            Table("entities", entities, ("gauge_id",), {"huc_02": "1"})]


def stage(task_id: str, tmp_path: Path) -> tuple[Path, Path, pd.DataFrame]:
    """Stage one query of the catalog task on the tiny repository; (public, private, original series)."""
    task = load_task(CAMELS / task_id)
    resolved = ResolvedScope("s", "temporal", "two basins", "", "gauge_id", BASINS, START, END)
    query = Query("q-1", task_id, task.task_hash, "s", "temporal", "", len(BASINS), START, END,
                  render_prompt(task.spec, resolved), BASINS)
    folder = tmp_path / task_id
    stage_task(task, folder)
    tables = repository()
    public = stage_query(task, tables, "gauge_id", query, folder)
    return public, folder / "private" / "q-1", tables[0].frame


def in_scope(series: pd.DataFrame) -> pd.DataFrame:
    keep = series["gauge_id"].isin(BASINS) & series["date"].between(pd.Timestamp(START), pd.Timestamp(END))
    return series[keep].reset_index(drop=True)


def test_scoped_tables_keep_only_the_querys_entities_and_days_inclusive():
    query = Query("q", "t", "h", "s", "temporal", "", 2, START, END, "", BASINS)
    series, entities = scoped_tables(repository(), "gauge_id", query)
    assert sorted(set(series.frame["gauge_id"])) == ["01", "02"]
    assert (series.frame["date"].min(), series.frame["date"].max()) == (pd.Timestamp(START), pd.Timestamp(END))
    assert len(series.frame) == 2 * 40
    assert entities.frame["gauge_id"].tolist() == ["01", "02"]
    assert series.units == repository()[0].units


def test_a_holdout_query_publishes_its_scope_with_the_test_period_withheld(tmp_path):
    public, private, original = stage("camels-streamflow-prediction", tmp_path)
    series = pd.read_parquet(public / "timeseries.parquet")
    expected = in_scope(original)
    assert sorted(set(series["gauge_id"])) == ["01", "02"]
    assert series["date"].min() == pd.Timestamp(START) and series["date"].max() == pd.Timestamp(END)
    assert len(series) == len(expected)
    test = series["date"] >= pd.Timestamp("2000-02-08")
    assert test.sum() == 2 * 12
    assert series.loc[test, "qobs_mm_d"].isna().all()
    pd.testing.assert_series_equal(series.loc[~test, "qobs_mm_d"], expected.loc[~test, "qobs_mm_d"])
    pd.testing.assert_series_equal(series["prcp_mm_d"], expected["prcp_mm_d"])  # forcing stays public
    assert pd.read_parquet(public / "entities.parquet")["gauge_id"].tolist() == ["01", "02"]

    truth = pd.read_parquet(private / "truth.parquet")
    observed = expected[(expected["date"] >= pd.Timestamp("2000-02-08")) & expected["qobs_mm_d"].notna()]
    assert truth["qobs_mm_d"].tolist() == observed["qobs_mm_d"].tolist()
    assert len(pd.read_parquet(private / "required.parquet")) == 2 * 12
    references = json.loads((private / "references.json").read_text())
    # the task's named models, every other value model and the mean of each pair of them (21 pairs);
    # nearest_entity has no coordinates here
    assert sorted(references) == VALUE_MODELS and len(VALUE_MODELS) == 1 + 7 + 21
    graded = {name: values for name, values in references.items() if name != "_not_applicable"}
    assert all(set(values) == {"nse", "kge"} for values in graded.values())
    assert all(isinstance(v, float) for values in graded.values() for v in values.values())


def test_the_readme_notes_the_withholding_and_the_public_files_are_read_only(tmp_path):
    public, _, _ = stage("camels-streamflow-prediction", tmp_path)
    readme = (public / "README.md").read_text()
    assert ("`qobs_mm_d` is null where it is withheld for evaluation (see the prompt's artifact block) and "
            "where it was never observed.") in readme
    assert "## timeseries.parquet" in readme and "80 rows" in readme
    assert sorted(p.name for p in public.iterdir()) == ["README.md", "entities.parquet", "timeseries.parquet"]
    for path in public.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o444, path.name


def test_a_hidden_gaps_query_owes_every_null_day_and_keeps_the_hidden_values_private(tmp_path):
    public, private, original = stage("camels-gap-filling", tmp_path)
    series = pd.read_parquet(public / "timeseries.parquet")
    expected = in_scope(original)
    nulls = series.loc[series["qobs_mm_d"].isna(), ["gauge_id", "date"]].reset_index(drop=True)
    required = pd.read_parquet(private / "required.parquet")
    pd.testing.assert_frame_equal(required, nulls, check_dtype=False)
    truth = pd.read_parquet(private / "truth.parquet")
    assert len(truth) >= 2 * 4  # round(0.1 * observed days) per basin: 4 of 38 and 4 of 39 (real gaps)
    merged = truth.merge(expected, on=["gauge_id", "date"], suffixes=("", "_original"))
    assert merged["qobs_mm_d"].tolist() == merged["qobs_mm_d_original"].tolist()
    assert truth.merge(series[series["qobs_mm_d"].notna()], on=["gauge_id", "date"]).empty
    assert sorted(json.loads((private / "references.json").read_text())) == VALUE_MODELS


def test_a_signatures_query_withholds_nothing(tmp_path):
    public, private, original = stage("camels-signature-clustering", tmp_path)
    series = pd.read_parquet(public / "timeseries.parquet")
    pd.testing.assert_series_equal(series["qobs_mm_d"], in_scope(original)["qobs_mm_d"])
    assert "withheld" not in (public / "README.md").read_text()
    assert pd.read_parquet(private / "truth.parquet")["gauge_id"].tolist() == ["01", "02"]


@pytest.mark.parametrize("task_id", ["camels-streamflow-prediction", "camels-gap-filling"])
def test_no_public_file_holds_a_basin_or_day_outside_the_scope(tmp_path, task_id):
    public, _, _ = stage(task_id, tmp_path)
    for path in public.glob("*.parquet"):
        frame = pd.read_parquet(path)
        assert set(frame["gauge_id"]) <= set(BASINS), path.name
        if "date" in frame:
            assert frame["date"].between(pd.Timestamp(START), pd.Timestamp(END)).all(), path.name


def test_a_query_whose_truth_cannot_be_formed_is_discarded_with_the_reason(tmp_path):
    task = load_task(CAMELS / "camels-signature-clustering")
    short_end = date(2000, 1, 30)  # 20 days: too few for the signatures the truth is made of

    def query(query_id: str, end: date) -> Query:
        resolved = ResolvedScope("s", "temporal", "two basins", "", "gauge_id", BASINS, START, end)
        return Query(query_id, task.spec.id, task.task_hash, f"scope-{query_id}", "temporal", "",
                     len(BASINS), START, end, render_prompt(task.spec, resolved), BASINS)

    folder = tmp_path / "task"
    stage_task(task, folder)
    staged, discards = stage_queries(task, repository(), "gauge_id", [query("q-short", short_end),
                                                                       query("q-long", END)], folder)
    assert [q.query_id for q in staged] == ["q-long"]
    assert [(d.query_id, d.stage, d.reason) for d in discards] == [
        ("q-short", "align", "ValueError: gauge_id 01: fewer than 30 observed days of qobs_mm_d")]
    assert not (folder / "public" / "q-short").exists() and not (folder / "private" / "q-short").exists()
    assert (folder / "private" / "q-long" / "truth.parquet").exists()
