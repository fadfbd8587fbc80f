"""The validity stage: the best constant answer, the gates and the report table."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from stages.params import ValidityGates, ValidityParams
from stages.scoring.validity import (
    best_constant_share,
    best_reference,
    candidate_task_failures,
    empty_task_failures,
    gate_failures,
    gold_spread,
    overall_failures,
    table,
)

SETTINGS = ValidityParams(oracle="oracle", floors=["fabricate", "nodata"], references=["climatology"],
                          gates=ValidityGates(oracle_min=99.0, floor_max=2.0, reference_max=40.0,
                                              constant_max_share=1 / 3, constant_min_queries=1))
PASSING = {"oracle": 100.0, "fabricate": 0.0, "nodata": 2.0, "climatology": 40.0}


# --- the best single constant answer --------------------------------------------------------------


def test_the_constant_gate_judges_only_a_task_with_enough_queries():
    gates = SETTINGS.gates.model_copy(update={"constant_min_queries": 6})
    settings = SETTINGS.model_copy(update={"gates": gates})
    spread = {"best_constant_share": 2 / 3, "best_constant": 0.5, "gold": {"n": 3}}
    assert gate_failures("t", PASSING, spread, settings) == []
    spread["gold"]["n"] = 6
    assert gate_failures("t", PASSING, spread, settings) == [
        "t: golds are near-constant: the answer 0.5 matches 67% of queries, the gate allows 33%"]


@pytest.mark.parametrize(
    ("golds", "tolerances", "share", "constant"),
    [
        ([], [], 0.0, None),
        ([3.0, 3.0, 3.0], [0.0, 0.0, 0.0], 1.0, 3.0),
        # Windows [-0.6, 0.6], [0.4, 1.6], [1.4, 2.6]: at most two overlap; of the points covering
        # two, 0.4 (the left end of the second window) is nearest 0.
        ([0.0, 1.0, 2.0], [0.6, 0.6, 0.6], 2 / 3, 0.4),
        # Windows that only touch: 1.0 is in both (the tolerance is inclusive).
        ([0.0, 2.0], [1.0, 1.0], 1.0, 1.0),
        # Different tolerances: [0.9, 1.1] and [1.0, 1.2] overlap on [1.0, 1.1], [4.9, 5.1] apart.
        ([1.0, 1.1, 5.0], [0.1, 0.1, 0.1], 2 / 3, 1.0),
        # A wide window [0, 20] holds two narrow ones, [4.9, 5.1] and [5.4, 5.6], that do not
        # overlap: two golds at most, first reached at 4.9.
        ([5.0, 5.5, 10.0], [0.1, 0.1, 10.0], 2 / 3, 4.9),
        # Negative golds: [-1.3, -0.7] and [-1.8, -1.2] overlap on [-1.3, -1.2]; -1.2 is nearest 0.
        ([-1.0, -1.5], [0.3, 0.3], 1.0, -1.2),
        ([5.0], [0.0], 1.0, 5.0),
    ],
)
def test_best_constant_share_is_the_most_golds_one_value_matches(golds, tolerances, share, constant):
    found_share, found_constant = best_constant_share(golds, tolerances)
    assert found_share == pytest.approx(share)
    assert found_constant == (None if constant is None else pytest.approx(constant))


# --- gates ----------------------------------------------------------------------------------------


def test_a_task_at_every_gates_bound_passes():
    assert gate_failures("t", PASSING, {"best_constant_share": 1 / 3, "best_constant": 0.5}, SETTINGS) == []


def test_missing_floor_and_reference_scores_count_as_zero():
    assert gate_failures("t", {"oracle": 99.0}, {}, SETTINGS) == []


@pytest.mark.parametrize(
    ("scores", "spread", "message"),
    [
        ({"oracle": None}, {}, "t: oracle scores None, the gate needs >= 99.0"),
        ({"oracle": 98.9}, {}, "t: oracle scores 98.9, the gate needs >= 99.0"),
        ({"fabricate": 2.5}, {}, "t: fabricate scores 2.5, the gate allows <= 2.0"),
        ({"nodata": 100.0}, {}, "t: nodata scores 100.0, the gate allows <= 2.0"),
        ({"climatology": 40.5}, {}, "t: reference agent climatology scores 40.5, the gate allows <= 40.0"),
        ({}, {"best_constant_share": 0.5, "best_constant": -0.123456},
         "t: golds are near-constant: the answer -0.1235 matches 50% of queries, the gate allows 33%"),
    ],
)
def test_each_failed_gate_is_named_with_its_numbers(scores, spread, message):
    assert gate_failures("t", PASSING | scores, spread, SETTINGS) == [message]


def test_every_failed_gate_is_listed():
    scores = {"oracle": 50.0, "fabricate": 10.0, "nodata": 10.0, "climatology": 90.0}
    failures = gate_failures("t", scores, {"best_constant_share": 1.0, "best_constant": 0.0}, SETTINGS)
    assert [f.split(" scores ")[0].split(":")[1].strip() for f in failures[:4]] == [
        "oracle", "fabricate", "nodata", "reference agent climatology"]
    assert failures[4].startswith("t: golds are near-constant: the answer 0 matches 100% of queries")


# --- candidates: above every reference agent, not above the oracle -------------------------------

WITH_CANDIDATE = SETTINGS.model_copy(update={
    "references": ["climatology", "interpolate"], "candidates": ["heuristic"],
    "gates": SETTINGS.gates.model_copy(update={"candidate_margin": 30.0})})


def test_the_best_reference_is_the_highest_score_and_a_missing_one_counts_as_zero():
    assert best_reference({"climatology": 10.0, "interpolate": 25.0}, WITH_CANDIDATE) == ("interpolate", 25.0)
    assert best_reference({"climatology": None}, WITH_CANDIDATE) == ("climatology", 0.0)
    assert best_reference({}, SETTINGS.model_copy(update={"references": []})) == (None, 0.0)


@pytest.mark.parametrize(("heuristic", "messages"), [
    (25.0, []),    # equal to the best reference: the per-task gate is >=
    (100.0, []),   # equal to the oracle: the oracle is an upper bound, not a strict one
    (None, ["t: candidate heuristic scores 0.0, below reference agent interpolate (25.0); the gate needs >= 25.0"]),
    (24.9, ["t: candidate heuristic scores 24.9, below reference agent interpolate (25.0); the gate needs >= 25.0"]),
])
def test_a_candidate_scores_at_least_the_best_reference_on_every_task(heuristic, messages):
    scores = {"oracle": 100.0, "climatology": 10.0, "interpolate": 25.0, "heuristic": heuristic}
    assert candidate_task_failures("t", scores, WITH_CANDIDATE) == messages


def test_a_candidate_above_the_oracle_fails_and_is_named_by_gate_failures():
    scores = {"oracle": 99.0, "fabricate": 0.0, "nodata": 0.0, "climatology": 0.0, "heuristic": 100.0}
    assert gate_failures("t", scores, {}, WITH_CANDIDATE) == [
        "t: candidate heuristic scores 100.0, above the oracle (99.0); the gate needs <= 99.0"]


@pytest.mark.parametrize(("heuristic", "failures"), [
    (55.0, []),
    (54.9, ["overall: candidate heuristic scores 54.9, the gate needs >= 55 (reference agent interpolate "
            "25.0 + margin 30)"]),
])
def test_a_candidates_overall_score_clears_the_best_reference_by_the_margin(heuristic, failures):
    overall = {"oracle": 100.0, "climatology": 5.0, "interpolate": 25.0, "heuristic": heuristic}
    assert overall_failures(overall, WITH_CANDIDATE) == failures


# --- gold spread ----------------------------------------------------------------------------------


def write_task(tmp_path, records: dict, references: dict[str, dict]) -> None:
    private = tmp_path / "tasks" / "t" / "private"
    private.mkdir(parents=True)
    (private / "queries.json").write_text(json.dumps(records))
    for query_id, values in references.items():
        (private / query_id).mkdir()
        (private / query_id / "references.json").write_text(json.dumps(values))


def test_gold_spread_of_a_hypothesis_task_reports_the_best_constant(tmp_path):
    records = {"q1": {"gold": {"answer": 0.1}, "tolerance": 0.05},
               "q2": {"gold": {"answer": 0.12}, "tolerance": 0.05},
               "q3": {"gold": {"answer": 0.5}, "tolerance": None}}
    write_task(tmp_path, records, {})
    spread = gold_spread(tmp_path, "t")
    assert spread == {"kind": "hypothesis", "gold": {"n": 3, "min": 0.1, "median": 0.12, "max": 0.5},
                      "tolerance": {"n": 3, "min": 0.0, "median": 0.05, "max": 0.05},
                      "best_constant": pytest.approx(0.07), "best_constant_share": pytest.approx(2 / 3, abs=1e-6)}


def test_gold_spread_of_a_metrics_task_includes_the_defined_reference_values(tmp_path):
    records = {"q1": {"gold": {"metrics": {"nse": 0.5}}}, "q2": {"gold": {"metrics": {"nse": 0.7}}}}
    write_task(tmp_path, records, {"q1": {"climatology": {"nse": 0.2}, "region": {"nse": None}},
                                   "q2": {"climatology": {"nse": 0.4},
                                          "_not_applicable": {"nearest_entity": "ValueError: no coordinates"}}})
    spread = gold_spread(tmp_path, "t")
    assert spread == {"kind": "metrics", "gold": {"nse": {"n": 2, "min": 0.5, "median": 0.6, "max": 0.7}},
                      "references": {"climatology": {"nse": {"n": 2, "min": 0.2, "median": 0.3, "max": 0.4}}}}


# --- the table ------------------------------------------------------------------------------------


def test_the_table_shows_scores_overall_provenance_and_every_failure_line():
    report = {
        "agents": ["oracle", "fabricate", "climatology"],
        "tasks": {
            "camels-gap-filling": {"scores": {"oracle": 100.0, "fabricate": 0.0, "climatology": 55.0},
                                   "gold_spread": {"kind": "metrics"}},
            "camels-aridity-runoff": {"scores": {"oracle": 95.0, "fabricate": None, "climatology": None},
                                      "gold_spread": {"best_constant_share": 0.25}},
        },
        "overall": {"oracle": 97.5, "fabricate": 0.0, "climatology": 27.5},
        "provenance": {"camels": {"origins": {"camels_us": "synthetic"}, "mixed": False},
                       "fluxnet": {"error": "no manifest"}},
        "failures": ["camels-gap-filling: reference agent climatology scores 55.0, the gate allows <= 40.0",
                     "camels-aridity-runoff: oracle scores 95.0, the gate needs >= 99.0"],
        "passed": False,
    }
    lines = table(report).splitlines()
    assert lines[0].split() == ["task", "oracle", "fabricate", "climatolog", "best-const"]
    assert lines[1].split() == ["camels-gap-filling", "100.0", "0.0", "55.0", "-"]
    assert lines[2].split() == ["camels-aridity-runoff", "95.0", "0.0", "0.0", "25%"]
    assert lines[3].split() == ["overall", "97.5", "0.0", "27.5"]
    assert lines[4:] == [
        "data of camels: camels_us (synthetic)",
        "data of fluxnet: no manifest",
        "gates: FAILED",
        "  camels-gap-filling: reference agent climatology scores 55.0, the gate allows <= 40.0",
        "  camels-aridity-runoff: oracle scores 95.0, the gate needs >= 99.0",
    ]


def test_the_table_warns_of_mixed_data_and_says_when_every_gate_passed():
    report = {"agents": ["oracle"], "tasks": {}, "overall": {"oracle": 100.0},
              "provenance": {"camels": {"origins": {"a": "real", "b": "synthetic"}, "mixed": True}},
              "failures": [], "passed": True}
    assert table(report).splitlines()[-2:] == [
        "data of camels: a (real), b (synthetic)  WARNING: real and synthetic sources are mixed",
        "gates: all passed"]


# --- the whole report on a hand-made benchmark -----------------------------------------------------


def _write(path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def _benchmark(root):
    """Two kept tasks (a hypothesis and a metrics task) and the tasks.json of every agent."""
    benchmark, metrics = root / "processed/benchmark", root / "processed/metrics"
    overlap = {"max_test_train_jaccard": 0.5}
    _write(benchmark / "verification.json", {
        "tasks_kept": ["t-hyp", "t-met"],
        "tasks": {"t-hyp": {"split_overlap": overlap}, "t-met": {"split_overlap": None},
                  "t-dropped": {"split_overlap": None, "queries_drawn": 1,
                                "discarded": [{"stage": "verify", "reason": "gold misses ..."}]}}})
    _write(benchmark / "tasks/t-hyp/private/queries.json", {
        "q1": {"gold": {"answer": -0.5}, "tolerance": 0.01},
        "q2": {"gold": {"answer": -0.2}, "tolerance": 0.01},
        "q3": {"gold": {"answer": -0.505}, "tolerance": 0.01}})
    _write(benchmark / "tasks/t-met/private/queries.json", {
        "q4": {"gold": {"metrics": {"nse": 0.8}}, "tolerance": None}})
    _write(benchmark / "tasks/t-met/private/q4/references.json", {"climatology": {"nse": 0.3}})
    scores = {"oracle": (100.0, 100.0), "fabricate": (0.0, 0.0), "nodata": (0.0, 2.0),
              "climatology": (0.0, 50.0)}
    for agent, (hyp, met) in scores.items():
        _write(metrics / f"{agent}.json", {"exact_match": {"n_queries": 2, "rate": hyp / 100}})
        _write(metrics / f"{agent}.tasks.json", {"tasks": {
            "t-hyp": {"score": hyp},
            "t-met": {"score": met, "honesty": {"rate": 1.0 if agent == "oracle" else 0.0}}}})
    _write(root / "processed/repositories/camels/manifest.json", {"tables": {}})
    _write(benchmark / "benchmark.json", {"tasks": ["t-hyp", "t-met"]})
    for task_id, category, difficulty, answer in [
            ("t-hyp", "feature_label_correlation", "easy",
             {"hypothesis": {"format": "number", "description": "a slope"}}),
            ("t-met", "forecasting", "hard",
             {"metrics": [{"name": "nse", "description": "NSE", "target": "higher is better"}]})]:
        spec = {"id": task_id, "domain": "camels", "category": category, "difficulty": difficulty,
                "tags": {"capability": ["modeling"]}, "modalities": ["timeseries"],
                "source": {"citation": "c"}, "prompt": "p", "data": {"repository": "camels", "tables": {}},
                "scopes": ["s"], "answer": answer}
        _write(benchmark / f"tasks/{task_id}/private/task.yaml", spec)  # JSON is YAML
    pd.DataFrame({"task_id": ["t-hyp"] * 3 + ["t-met"], "split": ["test", "test", "train", "test"],
                  "n_entities": [4, 5, 5, 3],
                  "scope_kind": ["geographic"] * 4}).to_parquet(benchmark / "queries.parquet")
    return benchmark, metrics


def test_the_report_gates_every_kept_task_and_summarises_per_agent(tmp_path, monkeypatch):
    from stages.scoring.validity import summary_metrics, validity_report

    benchmark, metrics = _benchmark(tmp_path)
    monkeypatch.chdir(tmp_path)
    report = validity_report(benchmark, metrics, SETTINGS, ["camels"])
    assert report["agents"] == ["oracle", "fabricate", "nodata", "climatology"]
    assert sorted(report["tasks"]) == ["t-hyp", "t-met"]
    assert report["tasks"]["t-met"]["scores"] == {"oracle": 100.0, "fabricate": 0.0, "nodata": 2.0,
                                                  "climatology": 50.0}
    assert report["tasks"]["t-met"]["honesty_rate"] == {"oracle": 1.0, "fabricate": 0.0, "nodata": 0.0,
                                                        "climatology": 0.0}
    assert report["tasks"]["t-hyp"]["honesty_rate"]["oracle"] is None
    assert report["tasks"]["t-hyp"]["split_overlap"] == {"max_test_train_jaccard": 0.5}
    # -0.5 and -0.505 share the window [-0.51, -0.49] & [-0.515, -0.495]: two of three golds for one
    # constant; among the candidates matching both, -0.495 is nearest 0.
    assert report["tasks"]["t-hyp"]["gold_spread"]["best_constant_share"] == round(2 / 3, 6)
    assert report["overall"] == {"oracle": 100.0, "fabricate": 0.0, "nodata": 1.0, "climatology": 25.0}
    assert report["failures"] == [
        "t-dropped: no query was verified (1 tried; discarded at verify 1; reasons in "
        "processed/benchmark/verification.json)",
        "t-hyp: golds are near-constant: the answer -0.495 matches 67% of queries, the gate allows 33%",
        "t-met: reference agent climatology scores 50.0, the gate allows <= 40.0",
    ]
    assert report["passed"] is False
    assert "error" in report["provenance"]["camels"]  # a manifest written before provenance existed
    assert report["by_category"]["climatology"] == {"feature_label_correlation": 0.0, "forecasting": 50.0}
    assert report["by_domain"]["nodata"] == {"camels": 1.0}
    catalog = report["catalog"]
    assert (catalog["tasks"], catalog["queries"]) == (2, 4)
    assert catalog["queries_by_split"] == {"test": 3, "train": 1}
    assert catalog["tasks_by_difficulty"] == {"easy": 1, "hard": 1}
    assert catalog["tasks_by_tag"]["capability"] == {"modeling": 2}
    assert catalog["tasks_by_category_domain"]["forecasting"] == {"camels": 1}
    assert len(catalog["categories_below_four_tasks"]) == 16
    assert summary_metrics(report) == {
        "passed": False, "failures": 3,
        "overall": {"oracle": 100.0, "fabricate": 0.0, "nodata": 1.0, "climatology": 25.0},
        "honesty_rate": {"oracle": 1.0, "fabricate": 0.0, "nodata": 0.0, "climatology": 0.0}}


def test_the_report_lists_candidates_after_the_oracle_and_gates_their_overall(tmp_path, monkeypatch):
    from stages.scoring.validity import validity_report

    benchmark, metrics = _benchmark(tmp_path)
    _write(metrics / "heuristic.tasks.json", {"tasks": {"t-hyp": {"score": 100.0}, "t-met": {"score": 60.0}}})
    _write(metrics / "heuristic.json", {"exact_match": {"n_queries": 2, "rate": 1.0}})
    monkeypatch.chdir(tmp_path)
    settings = SETTINGS.model_copy(update={"candidates": ["heuristic"]})
    report = validity_report(benchmark, metrics, settings, ["camels"])
    assert report["agents"] == ["oracle", "heuristic", "fabricate", "nodata", "climatology"]
    assert report["overall"]["heuristic"] == 80.0
    # 80 >= climatology's 25 + 30 and 60 >= 50 on t-met: only the other gates fail.
    assert [f for f in report["failures"] if "heuristic" in f] == []
    _write(metrics / "heuristic.tasks.json", {"tasks": {"t-hyp": {"score": 40.0}, "t-met": {"score": 45.0}}})
    report = validity_report(benchmark, metrics, settings, ["camels"])
    assert [f for f in report["failures"] if "heuristic" in f] == [
        "t-met: candidate heuristic scores 45.0, below reference agent climatology (50.0); the gate needs >= 50.0",
        "overall: candidate heuristic scores 42.5, the gate needs >= 55 (reference agent climatology 25.0 + "
        "margin 30)"]
    assert report["passed"] is False


def test_the_no_data_guessers_are_bounded_on_hypotheses_and_a_candidate_must_beat_both(tmp_path, monkeypatch):
    from stages.params import HypothesisGates
    from stages.scoring.validity import validity_report

    benchmark, metrics = _benchmark(tmp_path)
    for agent, hyp, rate in (("heuristic", 100.0, 0.1), ("prior", 0.0, 0.15)):
        _write(metrics / f"{agent}.tasks.json", {"tasks": {"t-hyp": {"score": hyp}, "t-met": {"score": 60.0}}})
        _write(metrics / f"{agent}.json", {"exact_match": {"n_queries": 20, "rate": rate}})
    _write(metrics / "nodata.json", {"exact_match": {"n_queries": 20, "rate": 0.05}})
    monkeypatch.chdir(tmp_path)
    settings = SETTINGS.model_copy(update={"candidates": ["heuristic"],
                                           "hypothesis": HypothesisGates(prior="prior")})
    report = validity_report(benchmark, metrics, settings, ["camels"])
    assert report["agents"] == ["oracle", "heuristic", "fabricate", "nodata", "prior", "climatology"]
    assert report["hypotheses"]["exact_match_percent"]["prior"] == 15.0
    assert [f for f in report["failures"] if f.startswith("hypotheses")] == [
        "hypotheses: prior matches 15.0 % of the gold answers, the gate allows <= 10 %",
        "hypotheses: candidate heuristic matches 10.0 %, not above the no-data guessers (15.0 %)"]
    # a number has no chance level; the format is reported with it
    assert report["tasks"]["t-hyp"]["hypothesis"] == {"format": "number", "chance_level": None}


def test_a_missing_agent_score_file_names_the_stage_to_run(tmp_path, monkeypatch):
    from stages.scoring.validity import validity_report

    benchmark, metrics = _benchmark(tmp_path)
    (metrics / "nodata.tasks.json").unlink()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"nodata.tasks.json: run score@nodata first"):
        validity_report(benchmark, metrics, SETTINGS, ["camels"])


def test_a_task_that_kept_no_query_fails_with_its_discards_by_stage():
    verification = {"tasks_kept": ["kept"], "tasks": {
        "kept": {"queries_drawn": 2, "discarded": []},
        "empty": {"queries_drawn": 3, "discarded": [
            {"stage": "verify", "reason": "gold misses the task's own targets: ..."},
            {"stage": "verify", "reason": "re-run does not reproduce the gold"},
            {"stage": "align", "reason": "no observed target"},
            {"stage": "formalize", "reason": "query pool is full (1 queries per task)"}]}}}
    assert empty_task_failures(verification) == [
        "empty: no query was verified (3 tried; discarded at align 1, verify 2; reasons in "
        "processed/benchmark/verification.json)"]
