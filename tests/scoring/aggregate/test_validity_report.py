"""The validity report: every kept task gated and summarised per agent, and its table."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from stages.params import ValidityGates, ValidityParams
from stages.scoring.aggregate.validity_report import table

SETTINGS = ValidityParams(oracle="oracle", floors=["fabricate", "nodata"], references=["climatology"],
                          gates=ValidityGates(oracle_min=99.0, floor_max=2.0, reference_max=40.0,
                                              constant_max_share=1 / 3, constant_min_queries=1))


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
    from stages.scoring.aggregate.validity_report import summary_metrics, validity_report

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
    from stages.scoring.aggregate.validity_report import validity_report

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
    from stages.scoring.aggregate.validity_report import validity_report

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
    from stages.scoring.aggregate.validity_report import validity_report

    benchmark, metrics = _benchmark(tmp_path)
    (metrics / "nodata.tasks.json").unlink()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"nodata.tasks.json: run score@nodata first"):
        validity_report(benchmark, metrics, SETTINGS, ["camels"])
