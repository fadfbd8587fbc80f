"""The half-hourly `methanewet-hh-*` catalog: the tasks as data, and known answers of its library.

- The catalog as data: the 16 half-hourly tasks load, carry the categories and difficulties
  declared for them, list at least 20 known `hh_` scopes, put their truth on `halfhourly` at
  `timestamp_start`, render prompts free of citations and never stage a column that would leak
  the flux (a gap-filled, model-filled or uncertainty column of it, or a site mean of it).
- Known answers: the functions of `methanewet_halfhourly` (rows, clocks) and
  `methanewet_halfhourly_models` on hand-made frames whose right answer follows from their
  construction (an exact log-linear site, equal residuals around a gap, a daily mean to reproduce,
  a donor site whose response a held-out site shares).
"""

from __future__ import annotations

from collections import Counter
from datetime import date

import numpy as np
import pandas as pd
import pytest
from scibench_testing.annotators import CATALOG
from scibench_testing.catalog_domains import import_library

from stages.catalog import CatalogTask, load_scopes, load_task
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope

DOMAIN = CATALOG / "methanewet"
LIBRARY = DOMAIN / "annotator_lib"
CATEGORIES = {
    "missing_value_imputation": 2, "up_downscaling": 2, "data_augmentation": 2, "model_distillation": 2,
    "transfer_learning": 2, "forecasting": 1, "feature_analysis": 1, "sampling": 1, "clustering": 1,
    "performance_stratification": 1, "novel_metrics": 1,
}
DIFFICULTIES = {"easy": 3, "medium": 8, "hard": 5}
AUTHORS = ("Irvin", "Kim", "Knox", "Peltola", "McNicol", "Arndt", "Chang", "Zhang", "Li et al",
           "Hinton", "Vinyals", "Pan", "Yang", "Vuichard", "Papale", "Tucker", "Reichstein")
MINUTES = 30


@pytest.fixture(scope="module")
def tasks() -> dict[str, CatalogTask]:
    folders = sorted(p for p in DOMAIN.glob("methanewet-hh-*") if (p / "task.yaml").exists())
    return {task.spec.id: task for task in map(load_task, folders)}


@pytest.fixture(scope="module")
def hh_rows():
    """The half-hourly rows and features module, imported as the annotator imports it (flat, by name)."""
    for (rows,) in import_library(LIBRARY, "methanewet_halfhourly"):
        yield rows


@pytest.fixture(scope="module")
def hh(hh_rows):
    """The half-hourly models module (it imports the rows module, already on the path)."""
    for (models,) in import_library(LIBRARY, "methanewet_halfhourly_models"):
        yield models


def site_frame(site: str, days: int, start: str = "2017-06-01", **columns) -> pd.DataFrame:
    """One site's half-hourly rows (UTC timestamps) with the given columns."""
    times = pd.date_range(start, periods=days * 48, freq=f"{MINUTES}min", tz="UTC")
    return pd.DataFrame({"site_id": site, "timestamp_start": times, **columns})


# --- the catalog as data --------------------------------------------------------------------------

def test_the_half_hourly_tasks_have_their_categories_and_difficulties(tasks):
    assert len(tasks) == 16
    assert Counter(t.spec.category for t in tasks.values()) == CATEGORIES
    assert Counter(t.spec.difficulty for t in tasks.values()) == DIFFICULTIES


def test_every_task_is_graded_on_the_half_hourly_table_over_known_scopes(tasks):
    scopes = load_scopes(DOMAIN)
    for task in tasks.values():
        spec = task.spec
        assert len(spec.scopes) >= 20 and set(spec.scopes) <= set(scopes), spec.id
        assert all(name.startswith("hh_") and scopes[name].period for name in spec.scopes), spec.id
        assert (spec.truth.table, spec.truth.time, spec.truth.column) == (
            "halfhourly", "timestamp_start", "fch4_nmol_m2_s"), spec.id
        assert all(m.grade is not None and m.references for m in spec.answer.metrics), spec.id
        assert all(set(m.references) <= set(spec.reference_models) for m in spec.answer.metrics)


def test_prompts_render_without_citations(tasks):
    scope = ResolvedScope("s", "geographic", "six boreal sites", "", "site_id", ("CA-Aaa", "FI-Bbb"),
                          date(2017, 6, 1), date(2017, 8, 15))
    for task in tasks.values():
        prompt = render_prompt(task.spec, scope, "q-test")
        assert "doi" not in prompt.lower() and "10." + "1" not in prompt, task.spec.id
        assert not [name for name in AUTHORS if name in prompt], task.spec.id
        assert "$" not in prompt and "arXiv" not in prompt, task.spec.id


def test_no_task_stages_a_column_derived_from_the_flux(tasks):
    for task in tasks.values():
        staged = [c for columns in task.spec.data.tables.values() for c in columns]
        derived = [c for c in staged if c.startswith("fch4_") and c != "fch4_nmol_m2_s"]
        assert not derived, (task.spec.id, derived)  # fch4_f_*, ANN fills, uncertainties, site means


# --- known answers of the library -----------------------------------------------------------------

def test_local_clock_shifts_utc_to_local_standard_time(hh_rows):
    frame = site_frame("A", 1)
    sites = pd.DataFrame({"utc_offset_h": [-6.0]}, index=pd.Index(["A"], name="site_id"))
    clock = hh_rows.local_clock(frame, sites)
    assert clock["hour"].iloc[0] == 18.0  # 00:00 UTC is 18:00 of the previous local day
    assert clock["day"].iloc[0] == pd.Timestamp("2017-05-31") and clock["hour"].iloc[13] == 0.5
    assert hh_rows.steps_per_day(frame).iloc[0] == 48


def test_process_model_recovers_an_exact_log_linear_site(hh):
    days = 20
    rng = np.random.default_rng(0)
    features = pd.DataFrame({"temperature": rng.uniform(5, 20, days * 48),
                             "hour_sin": np.sin(2 * np.pi * np.arange(days * 48) / 48)})
    log_flux = 1.0 + 0.09 * features["temperature"] + 0.2 * features["hour_sin"]
    frame = site_frame("A", days, fch4_nmol_m2_s=np.exp(log_flux))
    train = np.arange(len(frame)) < 600
    simulated = hh.process_model(frame, features, train, log_flux.to_numpy(),
                                 ("temperature", "hour_sin"))
    inside = (log_flux >= log_flux[train].min()) & (log_flux <= log_flux[train].max())
    np.testing.assert_allclose(simulated[inside], log_flux[inside], atol=0.02)  # ridge shrinks a little


def test_a_gap_between_equal_residuals_carries_it_fading_with_the_distance_to_the_edges(hh, hh_rows):
    frame = site_frame("A", 4)
    known = np.ones(len(frame), dtype=bool)
    known[80:110] = False  # a 15-hour gap
    anomaly = hh.edge_anomaly(frame, np.full(len(frame), 0.3), known, hh_rows.steps_per_day(frame),
                              tau_days=2.0)
    assert anomaly[79] == 0.0 and anomaly[110] == 0.0  # observed rows keep their own value
    assert anomaly[80] == pytest.approx(0.3 * np.exp(-(1 / 48) / 2.0))  # one step from the edge
    assert anomaly[94] == pytest.approx(0.3 * np.exp(-(15 / 48) / 2.0))  # the gap's middle


def test_the_anomaly_decays_with_its_time_constant_into_the_test_period(hh, hh_rows):
    frame = site_frame("A", 4)
    test = np.arange(len(frame)) >= 96
    decayed = hh.decayed_anomaly(frame, np.full(len(frame), 0.4), ~test, test, hh_rows.steps_per_day(frame),
                                 tau_days=2.0)
    assert decayed[95] == 0.0
    assert decayed[96 + 47] == pytest.approx(0.4 * np.exp(-1.0 / 2.0))  # one day in


def test_back_transform_gives_the_mean_or_the_median_flux(hh):
    residual = np.log(np.array([0.5, 1.0, 2.0]))
    assert hh.back_transform(np.zeros(1), residual)[0] == pytest.approx(3.5 / 3)
    assert hh.back_transform(np.zeros(1), residual, median=True)[0] == pytest.approx(1.0)


def test_scaling_to_the_daily_record_reproduces_the_daily_means(hh):
    frame = site_frame("A", 2)
    sites = pd.DataFrame({"utc_offset_h": [0.0]}, index=pd.Index(["A"], name="site_id"))
    shape = 1.0 + 0.5 * np.sin(2 * np.pi * np.arange(96) / 48)
    daily = pd.DataFrame({"site_id": "A", "date": pd.to_datetime(["2017-06-01", "2017-06-02"]),
                          "fch4_nmol_m2_s": [10.0, 30.0]})
    scaled = hh.scale_to_daily(frame, shape, daily, sites)
    assert scaled[:48].mean() == pytest.approx(10.0) and scaled[48:].mean() == pytest.approx(30.0)
    assert scaled[12] / scaled[36] == pytest.approx(shape[12] / shape[36])


def test_pseudo_gaps_hide_about_the_share_in_runs_and_repeat_with_the_seed(hh, hh_rows):
    frame = site_frame("A", 60)
    known = np.ones(len(frame), dtype=bool)
    per_day = hh_rows.steps_per_day(frame)
    hidden = hh.pseudo_gaps(frame, known, 0.15, (1.0, 3.0), per_day, seed=3)
    assert 0.15 <= hidden.mean() < 0.15 + 3 * 48 / len(frame)
    np.testing.assert_array_equal(hidden, hh.pseudo_gaps(frame, known, 0.15, (1.0, 3.0), per_day, seed=3))


def test_owed_rows_follow_the_artifact_rules(hh_rows):
    frame = pd.concat([site_frame("A", 2, fch4_nmol_m2_s=1.0), site_frame("B", 2, fch4_nmol_m2_s=np.nan)],
                      ignore_index=True)
    holdout = {"rows": {"kind": "holdout", "from": "2017-06-02", "to": "2017-06-02"}}
    held = {"rows": {"kind": "held_out_entities", "entities": ["B"]}}
    gaps = {"rows": {"kind": "hidden_gaps", "column": "fch4_nmol_m2_s"}}
    assert hh_rows.owed_rows(frame, holdout).sum() == 2 * 48
    np.testing.assert_array_equal(hh_rows.owed_rows(frame, held), (frame["site_id"] == "B").to_numpy())
    np.testing.assert_array_equal(hh_rows.owed_rows(frame, gaps), (frame["site_id"] == "B").to_numpy())


def test_a_donor_with_the_same_response_transfers_it_exactly(hh):
    days = 10
    rng = np.random.default_rng(1)
    temperature = rng.uniform(5, 20, 2 * days * 48)
    log_flux = 0.5 + 0.1 * temperature
    frame = pd.concat([site_frame("A", days), site_frame("B", days)], ignore_index=True)
    frame["fch4_nmol_m2_s"] = np.where(frame["site_id"] == "A", np.exp(log_flux), np.nan)
    features = pd.DataFrame({"temperature": temperature})
    weights = pd.DataFrame({"A": [1.0]}, index=["B"])
    out = hh.transfer_site_models(frame, features, ["B"], weights, columns=("temperature",))
    b = (frame["site_id"] == "B").to_numpy()
    np.testing.assert_allclose(out[b], np.exp(log_flux[b]), rtol=0.02)
    assert np.isnan(out[~b]).all()
