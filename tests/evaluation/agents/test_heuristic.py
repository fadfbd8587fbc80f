"""The heuristic agent: prompt parsing, profiling, method choice and each method family.

Unit tests build small hand-made workspaces (a methane-flux-like site table as well as the camels
prompts) and check exact outputs; test_heuristic_sandbox.py runs the agent through the real sandbox.
"""

from __future__ import annotations

import json
import sys
from datetime import date

import numpy as np
import pandas as pd
import pytest
from scibench_testing.annotators import CATALOG, KEY
from scibench_testing.heuristic_workspaces import block, write_workspace

from stages.catalog import HARNESS_METRICS, load_catalog
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.evaluation.agents.builtin import SCRIPTS, heuristic_identity
from stages.evaluation.program import directory_hash
from stages.hashing import file_sha256

sys.path.insert(0, str(SCRIPTS))  # the agent runs with the scripts folder on PYTHONPATH
sys.path.append(str(HARNESS_METRICS.parent))  # and the harness's metrics bound beside (HEURISTIC_METRICS)

from heuristic import __main__ as entry  # noqa: E402
from heuristic.cluster import partition  # noqa: E402
from heuristic.forecast import Entity, folds, forecast, per_entity, predict  # noqa: E402
from heuristic.gaps import edges, interpolate, since_edge  # noqa: E402
from heuristic.handin import Handin, conform, metrics_answer  # noqa: E402
from heuristic.impute import impute  # noqa: E402
from heuristic.metrics import aggregation_of, column_of, estimate, measure_of, nse, rmse  # noqa: E402
from heuristic.profile import profile_tables, read_profile  # noqa: E402
from heuristic.prompt import Plan, choose_plan, learner_for, parse_prompt, run_lengths  # noqa: E402
from heuristic.signatures import declared, read_settings  # noqa: E402
from heuristic.statistic import find_statistic, prior, statistic  # noqa: E402
from heuristic.variables import definition, match_column, name_words  # noqa: E402

SITES = ["US-A", "US-B", "US-C"]
REFERENCE_AGENTS = ["climatology", "linear_forcing", "interpolate", "region_partition", "mean_flow_split"]


@pytest.fixture(scope="module")
def camels_tasks():
    return {task.spec.id: task for task in load_catalog(CATALOG, ["camels"])}


@pytest.fixture(scope="module")
def camels_prompts(camels_tasks):
    scope = ResolvedScope("s", "temporal", "all basins", "", KEY, ("01000001", "01000002"),
                          date(2000, 1, 1), date(2002, 12, 31))
    return {task_id: render_prompt(task.spec, scope) for task_id, task in camels_tasks.items()}


# --- hand-made prompts and workspaces -------------------------------------------------------------


def make_prompt(objective: str, scope: dict, answer: dict, artifact: dict | None) -> str:
    text = f"# a task\n\n{objective}\n\n{block('Scope', scope)}\n{block('Answer format', answer)}"
    return text + (f"\n{block('Artifact', artifact)}" if artifact is not None else "")


def site_scope(start: str = "2018-01-01", end: str = "2020-12-31") -> dict:
    return {"entity_key": "site_id", "entities": SITES, "start": start, "end": end}


METRICS = {"kind": "metrics", "metrics": [
    {"name": "nse", "description": "Median across sites of the Nash-Sutcliffe efficiency.",
     "unit": "1", "valid_range": [None, 1], "no_skill": 0.0},
    {"name": "rmse_flux", "description": "Root mean square error, pooled over all site-days.",
     "unit": "nmol/m2/s", "valid_range": [0, None], "no_skill": None}]}


def flux_tables(seed: int = 0, start: str = "2018-01-01", end: str = "2020-12-31") -> dict[str, pd.DataFrame]:
    """Three sites: a flux that follows 10-day-smoothed temperature and a shared daily signal."""
    rng = np.random.default_rng(seed)
    days = pd.date_range(start, end, freq="D")
    shared = pd.Series(rng.normal(0, 1, len(days))).ewm(span=5).mean().to_numpy()
    rows = []
    for i, site in enumerate(SITES):
        temp = 10 + 12 * np.sin(2 * np.pi * (days.dayofyear - 100) / 365.25) + rng.normal(0, 2, len(days))
        smooth = pd.Series(temp).ewm(span=10).mean().to_numpy()
        flux = np.exp(0.08 * smooth) * (1 + i) + 0.5 * shared * (1 + i) + 0.5
        rows.append(pd.DataFrame({"site_id": site, "timestamp": days, "ta_c": temp,
                                  "fch4_nmol_m2_s": np.clip(flux, 0, None)}))
    series = pd.concat(rows, ignore_index=True)
    sites = pd.DataFrame({"site_id": SITES, "lat_deg": [40.0, 45.0, 50.0], "igbp": ["WET", "WET", "CRO"]})
    return {"daily": series, "sites": sites}


# --- the prompt and the method choice -------------------------------------------------------------


def test_the_family_comes_from_the_artifact_rows_and_the_answer_kind():
    answer = {"kind": "hypothesis", "format": "number", "description": "x"}
    holdout = {"file": "p.parquet", "key": ["site_id", "timestamp"], "columns": {"f": "float"},
               "descriptions": {"f": "flux"}, "rows": {"kind": "holdout", "column": "fch4",
                                                        "from": "2020-01-01", "to": "2020-12-31"}}
    gaps = holdout | {"rows": {"kind": "hidden_gaps", "column": "fch4"}}
    labels = holdout | {"key": ["site_id"], "columns": {"c": "int"}, "rows": {"kind": "entities"}}
    values = labels | {"columns": {"c": "float"}}
    plans = {name: choose_plan(parse_prompt(make_prompt("Runs of 7 to 21 consecutive days.", site_scope(),
                                                        METRICS if art else answer, art)))
             for name, art in [("holdout", holdout), ("gaps", gaps), ("labels", labels),
                               ("values", values), ("none", None)]}
    assert plans == {
        "holdout": Plan("forecast", {"f": "boosting"}, (7, 21)),
        "gaps": Plan("impute", {"f": "boosting"}, (7, 21)),
        "labels": Plan("partition", {"c": "boosting"}, (7, 21)),
        "values": Plan("none", {"c": "boosting"}, (7, 21)),
        "none": Plan("statistic"),
    }


def test_the_camels_prompts_choose_their_methods(camels_prompts):
    first_five = ("camels-aridity-runoff", "camels-gap-filling", "camels-model-comparison",
                  "camels-signature-clustering", "camels-streamflow-prediction")
    plans = {task: choose_plan(parse_prompt(camels_prompts[task])) for task in first_five}
    assert {task: (p.family, p.learners) for task, p in plans.items()} == {
        "camels-aridity-runoff": ("statistic", {}),
        "camels-gap-filling": ("impute", {"qfill_mm_d": "boosting"}),
        "camels-model-comparison": ("forecast", {"qsim_linear_mm_d": "linear", "qsim_forest_mm_d": "forest"}),
        "camels-signature-clustering": ("partition", {"cluster": "boosting"}),
        "camels-streamflow-prediction": ("forecast", {"qsim_mm_d": "boosting"}),
    }
    assert plans["camels-gap-filling"].run_days == (5, 30)
    clustering = parse_prompt(camels_prompts["camels-signature-clustering"])
    assert declared(clustering.identifiers) == ["log_q_mean", "runoff_ratio", "baseflow_index",
                                                "high_q_freq", "log_q5", "log_q95"]
    assert read_settings(clustering.text) == read_settings("ln(0.01 + x), above 9 times the median")


@pytest.mark.parametrize(("description", "learner"), [
    ("daily streamflow simulated by the basin's linear regression model, mm/d", "linear"),
    ("simulated by the basin's random forest", "forest"),
    ("fit by ordinary least squares", "linear"),
    ("gradient-boosted trees", "boosting"),
    ("filled daily flux", "boosting"),
])
def test_a_value_columns_description_names_its_learner(description, learner):
    assert learner_for(description) == learner


def test_run_lengths_default_when_the_prompt_states_none():
    assert run_lengths("runs of 3 to 9 consecutive observed days") == (3, 9)
    assert run_lengths("some gaps") == (5, 30)


def test_a_prompt_without_scope_or_answer_block_is_refused():
    with pytest.raises(ValueError, match="Scope"):
        parse_prompt("# t\n\nno blocks")


# --- profiling ------------------------------------------------------------------------------------


def test_the_profile_finds_the_series_the_attributes_and_the_missingness():
    tables = flux_tables()
    tables["daily"].loc[[0, 1, 2], "fch4_nmol_m2_s"] = None
    tables["daily"]["site_id"] = tables["daily"]["site_id"].astype("category")
    profile = profile_tables(tables, site_scope("2018-01-01", "2018-01-10"), "fch4_nmol_m2_s")
    assert (profile.key, profile.time, profile.target) == ("site_id", "timestamp", "fch4_nmol_m2_s")
    assert profile.drivers == ["ta_c"]
    assert profile.attributes == ["lat_deg"]
    assert profile.missing == {"ta_c": 0.0, "fch4_nmol_m2_s": 0.1}
    assert profile.entity_ids() == SITES
    assert len(profile.series) == 30  # the scope's ten days of each site only
    assert list(profile.entities.index) == SITES


# --- metrics and gap geometry ---------------------------------------------------------------------


def test_reported_metrics_map_to_a_measure_an_aggregation_and_a_column():
    nse_metric, rmse_metric = METRICS["metrics"]
    assert (measure_of(nse_metric), aggregation_of(nse_metric)) == (nse, "median")
    assert (measure_of(rmse_metric), aggregation_of(rmse_metric)) == (rmse, "pooled")
    assert column_of({"name": "median_nse_forest"}, ["qsim_linear_mm_d", "qsim_forest_mm_d"]) == "qsim_forest_mm_d"
    pairs = {"a": (np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])),
             "b": (np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0])),
             "c": (np.array([1.0, 3.0]), np.array([1.0, 1.0]))}
    assert estimate(nse_metric, pairs) == 0.0  # per site 1, 0, -1: the median
    assert estimate(rmse_metric, pairs) == round(float(np.sqrt(6 / 8)), 6)


def test_gap_edges_interpolation_and_sums_since_the_gap_began():
    known = np.array([True, False, False, True, False])
    before, after = edges(known)
    assert before.tolist() == [0, 0, 0, 3, 3]
    assert after.tolist() == [0, 3, 3, 3, 5]
    values = np.array([1.0, 0.0, 0.0, 4.0, 0.0])
    assert interpolate(values, before, after).tolist() == [1.0, 2.0, 3.0, 4.0, 4.0]
    assert since_edge(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), before).tolist() == [0.0, 2.0, 5.0, 0.0, 5.0]


def test_folds_are_contiguous_blocks_of_training_rows():
    train = np.array([True, True, False, True, True, True])
    assert [np.flatnonzero(f).tolist() for f in folds(train, 2)] == [[0, 1, 3], [4, 5]]


def test_the_artifact_is_conformed_to_its_declared_schema():
    frame = pd.DataFrame({"c": [1.6, 0.2], "site_id": [1, 2], "extra": [0, 0]})
    out = conform(frame, {"key": ["site_id"], "columns": {"c": "int"}}, None)
    assert out.to_dict("list") == {"site_id": ["1", "2"], "c": [2, 0]}
    assert metrics_answer({"a": 0.5, "b": None, "c": float("nan")}) == {"metrics": {"a": 0.5}}


# --- the families on hand-made workspaces ---------------------------------------------------------


def test_forecast_predicts_exactly_the_owed_rows_and_beats_the_seasonal_mean(tmp_path):
    tables = flux_tables()
    truth = tables["daily"][tables["daily"]["timestamp"] >= "2020-03-01"].copy()
    tables["daily"].loc[tables["daily"]["timestamp"] >= "2020-03-01", "fch4_nmol_m2_s"] = None
    artifact = {"file": "p.parquet", "key": ["site_id", "timestamp"], "columns": {"fch4_sim": "float"},
                "descriptions": {"fch4_sim": "simulated flux"},
                "rows": {"kind": "holdout", "column": "fch4_nmol_m2_s", "from": "2020-03-01", "to": "2020-12-31"}}
    prompt = parse_prompt(make_prompt("Predict the flux.", site_scope(), METRICS, artifact))
    handin = forecast(profile_tables(tables, prompt.scope, "fch4_nmol_m2_s"), prompt, choose_plan(prompt))
    merged = truth.merge(handin.artifact, on=["site_id", "timestamp"], validate="one_to_one")
    assert len(handin.artifact) == len(truth) == 3 * 306
    scores = [nse(g["fch4_nmol_m2_s"].to_numpy(), g["fch4_sim"].to_numpy()) for _, g in merged.groupby("site_id")]
    assert min(scores) > 0.5
    assert sorted(handin.answer["metrics"]) == ["nse", "rmse_flux"]
    assert abs(handin.answer["metrics"]["nse"] - float(np.median(scores))) < 0.3


def test_impute_fills_every_null_day_better_than_a_straight_line(tmp_path):
    tables = flux_tables(seed=1, end="2018-12-31")
    series = tables["daily"]
    offset = series["site_id"].map({site: 40 * i for i, site in enumerate(SITES)})
    day = series["timestamp"].dt.dayofyear - offset
    hidden = day.between(100, 111) | day.between(200, 219)  # other days at each site: donors see them
    truth = series[hidden].copy()
    series.loc[hidden, "fch4_nmol_m2_s"] = None
    artifact = {"file": "f.parquet", "key": ["site_id", "timestamp"], "columns": {"fch4_fill": "float"},
                "descriptions": {"fch4_fill": "filled flux"},
                "rows": {"kind": "hidden_gaps", "column": "fch4_nmol_m2_s"}}
    prompt = parse_prompt(make_prompt("Fill the gaps.", site_scope(end="2018-12-31"), METRICS, artifact))
    handin = impute(profile_tables(tables, prompt.scope, "fch4_nmol_m2_s"), prompt, choose_plan(prompt))
    merged = truth.merge(handin.artifact, on=["site_id", "timestamp"], validate="one_to_one")
    assert len(handin.artifact) == len(truth) == 3 * 32
    line = series.groupby("site_id")["fch4_nmol_m2_s"].transform(lambda s: s.interpolate())[hidden]
    assert rmse(merged["fch4_nmol_m2_s"].to_numpy(), merged["fch4_fill"].to_numpy()) < rmse(
        truth["fch4_nmol_m2_s"].to_numpy(), line.to_numpy())


def test_partition_separates_two_obvious_groups_and_reports_their_silhouette():
    days = pd.date_range("2019-01-01", periods=200, freq="D")
    rng = np.random.default_rng(3)
    names = [f"S{i}" for i in range(8)]
    rows = [pd.DataFrame({"site_id": name, "timestamp": days, "p_mm_d": 2.0,
                          "q_mm_d": rng.gamma(2.0, (0.2 if i < 4 else 3.0), len(days))})
            for i, name in enumerate(names)]
    scope = {"entity_key": "site_id", "entities": names, "start": "2019-01-01", "end": "2019-07-19"}
    artifact = {"file": "c.parquet", "key": ["site_id"], "columns": {"group": "int"},
                "rows": {"kind": "entities", "column": "q_mm_d"}}
    answer = {"kind": "metrics", "metrics": [{"name": "silhouette", "description": "mean silhouette"}]}
    prompt = parse_prompt(make_prompt("Group by `log_q_mean` and `runoff_ratio`.", scope, answer, artifact))
    handin = partition(profile_tables({"daily": pd.concat(rows)}, scope, "q_mm_d"), prompt, choose_plan(prompt))
    labels = handin.artifact["group"].tolist()
    assert len(set(labels[:4])) == len(set(labels[4:])) == 1 and labels[0] != labels[4]
    assert 0.9 < handin.answer["metrics"]["silhouette"] <= 1.0


def test_statistic_resolves_a_defined_ratio_and_an_attribute_into_an_exact_slope():
    days = pd.date_range("2019-01-01", periods=10, freq="D")
    aridity = {"S0": 0.5, "S1": 1.0, "S2": 1.5, "S3": 2.0}
    rows = [pd.DataFrame({"site_id": s, "date": days, "prcp_mm_d": 2.0,
                          "qobs_mm_d": 2.0 * (0.8 - 0.3 * a)}) for s, a in aridity.items()]
    rows[0].loc[3, "qobs_mm_d"] = None  # a gap: the means are taken over the same known days
    entities = pd.DataFrame({"site_id": list(aridity), "aridity": list(aridity.values()), "elev_mean_m": 1.0})
    text = ("For each basin, compute the runoff ratio = mean daily observed streamflow / mean daily\n"
            "precipitation, both averaged over the same days. Then give the slope of the ordinary "
            "least-squares line of runoff ratio on aridity (`aridity`).")
    answer = {"kind": "hypothesis", "format": "number", "valid_range": [None, None],
              "description": "Slope of the ordinary least-squares line of runoff ratio (from days with "
                             "observed streamflow) on the aridity index, across the scope's basins."}
    scope = {"entity_key": "site_id", "entities": list(aridity), "start": "2019-01-01", "end": "2019-01-10"}
    prompt = parse_prompt(make_prompt(text, scope, answer, None))
    assert find_statistic([answer["description"]]) == ("slope", "runoff ratio", "aridity index")
    assert definition(text, "runoff ratio") == "mean daily observed streamflow / mean daily precipitation"
    profile = profile_tables({"series": pd.concat(rows), "entities": entities}, scope, None)
    assert statistic(profile, prompt, choose_plan(prompt)) == Handin(None, {"answer": -0.3})


def test_column_words_expand_abbreviations_and_drop_units():
    assert name_words("prcp_mm_d") == {"prcp", "precipitation", "rain"}
    assert match_column("mean daily precipitation", ["tmax_c", "prcp_mm_d", "qobs_mm_d"]) == "prcp_mm_d"
    assert match_column("observed streamflow", ["prcp_mm_d", "qobs_mm_d"]) == "qobs_mm_d"
    assert match_column("the soil type", ["prcp_mm_d"]) is None


def test_an_unresolvable_hypothesis_answers_the_prior():
    assert prior({"format": "number", "valid_range": [-1, 3]}) == 1.0
    assert prior({"format": "category", "categories": ["wet", "dry"]}) == "wet"


# --- robustness: a failing method falls back, the answer is always written ------------------------


def test_a_failing_method_falls_back_to_the_next_and_says_so(tmp_path, monkeypatch, capsys):
    artifact = {"file": "p.parquet", "key": ["site_id", "timestamp"], "columns": {"fch4_sim": "float"},
                "rows": {"kind": "holdout", "column": "fch4_nmol_m2_s", "from": "2020-12-01", "to": "2020-12-31"}}
    workspace = write_workspace(tmp_path / "ws", make_prompt("Predict.", site_scope(), METRICS, artifact),
                                flux_tables())

    def broken(profile, prompt, plan):
        raise RuntimeError("singular matrix")

    monkeypatch.setitem(entry.METHODS, "forecast", (broken, *entry.METHODS["forecast"][1:]))
    monkeypatch.setattr(sys, "argv", ["heuristic", str(workspace)])
    entry.main()
    assert "broken failed; falling back" in capsys.readouterr().err
    written = pd.read_parquet(workspace / "work" / "p.parquet")
    assert list(written.columns) == ["site_id", "timestamp", "fch4_sim"]
    assert len(written) == 3 * 31
    assert json.loads((workspace / "work" / "answer.json").read_text()) == {"metrics": {}}


def test_unreadable_data_still_writes_an_answer(tmp_path, monkeypatch):
    answer = {"kind": "hypothesis", "format": "boolean", "description": "whether x rises with y"}
    workspace = write_workspace(tmp_path / "ws", make_prompt("Test it.", site_scope(), answer, None), {})
    (workspace / "data" / "broken.parquet").write_text("not parquet")
    monkeypatch.setattr(sys, "argv", ["heuristic", str(workspace)])
    entry.main()
    assert json.loads((workspace / "work" / "answer.json").read_text()) == {"answer": False}


def test_the_heuristics_code_keys_its_journal_records():
    assert heuristic_identity({}) == {"options": {}, "code": directory_hash(SCRIPTS / "heuristic"),
                                      "metrics": file_sha256(HARNESS_METRICS)}


def test_profiles_are_read_from_a_workspace(tmp_path):
    workspace = write_workspace(tmp_path / "ws", "", flux_tables())
    profile = read_profile(workspace / "data", site_scope("2019-01-01", "2019-12-31"), "fch4_nmol_m2_s")
    assert profile.series["timestamp"].min().date() == date(2019, 1, 1)
    assert profile.entity_ids() == SITES


def test_an_entity_that_owes_no_rows_gets_an_empty_prediction_not_a_crash():
    """A forecast scope can hold a site with nothing owed: predicting zero rows used to raise in
    scikit-learn, and the whole query fell back to the mean forecast."""
    from heuristic.learners import fit_predict

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    assert fit_predict("boosting", x, y, np.empty((0, 3))).shape == (0,)
    assert fit_predict("boosting", x, y, x[:2]).shape == (2,)


def test_the_default_ensemble_carries_a_level_that_drifted_past_the_training_range():
    """Trees predict within the training targets' range; the ridge member extrapolates a drift
    (methanewet-hh-hysteresis-bias: the late season's flux beyond the early season's)."""
    x = np.arange(300, dtype=float)[:, None]
    y = 2.0 * x[:, 0] + 1.0
    train = np.arange(300) < 200
    entity = Entity(x, y, train, ~train, folds(train, 2), 0.0)
    trees, linear = per_entity(entity, "boosting")[0], per_entity(entity, "linear")[0]
    [(ensemble, _)] = predict([entity], "boosting")
    assert trees.max() <= y[train].max() < linear.min()
    np.testing.assert_allclose(ensemble, (trees + linear) / 2, rtol=1e-12)
    assert ensemble.max() > y[train].max() + 80  # trees alone stay at 399
