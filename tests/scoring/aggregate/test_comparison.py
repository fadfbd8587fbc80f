import json

import pandas as pd
import pytest

from stages.scoring.aggregate.comparison import (
    ScoredAgent,
    compare,
    cost_ratio,
    frontier,
    load_scored,
    parallelism,
)
from stages.scoring.aggregate.suite import COLUMNS


def agent(rows: list[tuple[str, str, str, float, float, int]], tasks: dict[str, float | None]) -> ScoredAgent:
    """(task, query, outcome, q, wall seconds, tokens) rows."""
    frame = pd.DataFrame([{"task_id": t, "query_id": q, "outcome": o, "q": v, "reward": v, "exec_ok": True,
                           "wall_seconds": w, "agent_seconds": w, "tokens": k, "cost_usd": 0.0, "attempts": 1,
                           "agent_limit": None} for t, q, o, v, w, k in rows], columns=COLUMNS)
    summary = {"score": sum(v for v in tasks.values() if v is not None) / len(tasks), "score_ci": None,
               "outcomes": {}, "realistic_rate": 1.0, "pass_rate_given_realistic": 1.0, "split": "test"}
    return ScoredAgent(summary, tasks, frame)


BASE = agent([("a", "1", "answered", 0.5, 2.0, 0), ("a", "2", "answered", 0.5, 2.0, 0),
              ("b", "1", "answered", 0.0, 1.0, 0)], {"a": 50.0, "b": 0.0})
STRONG = agent([("a", "1", "answered", 1.0, 4.0, 100), ("a", "2", "answered", 1.0, 8.0, 300),
                ("b", "1", "infra_error", 0.0, 1.0, 0)], {"a": 100.0, "b": None})


def test_cost_ratios_are_per_query_means_over_shared_scored_queries():
    assert cost_ratio(STRONG, BASE, "wall_seconds") == 3.0  # (4/2 + 8/2) / 2; the infra error is skipped
    assert cost_ratio(STRONG, BASE, "tokens") is None  # the baseline used no tokens
    assert cost_ratio(BASE, STRONG, "tokens") == 0.0


def test_versus_baseline_follows_st_bench():
    result = compare({"base": BASE, "strong": STRONG}, "base", [], resamples=100, seed=0, level=0.95)
    strong = result["versus_baseline"]["strong"]
    assert strong["win_rate"] == 1.0  # task b has no score for strong: only task a is compared
    assert strong["delta_perf"] == 50.0
    assert strong["delta_ci"]["low"] == strong["delta_ci"]["high"] == 50.0
    assert strong["rho_time"] == 3.0 and strong["eta_time"] == 25.0  # 50 / max(3 - 1, 0.1)
    assert strong["rho_token"] is None and strong["eta_token"] is None
    base = result["versus_baseline"]["base"]
    assert (base["win_rate"], base["delta_perf"], base["rho_time"], base["eta_time"]) == (0.0, 0.0, 1.0, 0.0)
    assert result["frontier"] == ["base", "strong"]
    assert result["agents"]["strong"]["tokens_per_query"] == pytest.approx(133.333333)
    assert result["agents"]["strong"]["parallelism"] == 1.0


def test_the_frontier_drops_agents_beaten_on_both_axes_and_keeps_ties():
    points = {"cheap": (1.0, 0.0), "good": (2.0, 10.0), "worse": (3.0, 5.0), "tie": (2.0, 10.0),
              "unmeasured": (None, 4.0)}
    assert frontier(points) == ["cheap", "good", "tie"]


def test_generalizability_is_the_mean_task_score_gap():
    task_trained = agent([("a", "1", "answered", 1.0, 1.0, 0)], {"a": 80.0, "b": 40.0})
    category_trained = agent([("a", "1", "answered", 1.0, 1.0, 0)], {"a": 70.0, "b": 20.0})
    result = compare({"t": task_trained, "c": category_trained}, None, [("t", "c")], 100, 0, 0.95)
    assert result["generalizability"] == [{"task_trained": "t", "category_trained": "c", "gen": 15.0}]
    assert result["versus_baseline"] == {} and result["frontier"] == []


def test_parallelism_is_wall_over_agent_time():
    busy = agent([("a", "1", "answered", 1.0, 10.0, 0)], {"a": 100.0})
    busy.queries["agent_seconds"] = [25.0]
    assert parallelism(busy) == 0.4


def test_a_missing_score_output_names_the_stage_to_run(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "x.json").write_text(json.dumps({"score": 1}))
    with pytest.raises(FileNotFoundError, match=r"x\.tasks\.json.*x\.parquet missing; run `dvc repro score@x`"):
        load_scored("x", tmp_path / "m", tmp_path / "s")


def test_an_unknown_cost_makes_the_mean_cost_per_query_unknown():
    priced = agent([("a", "1", "answered", 1.0, 1.0, 10), ("a", "2", "answered", 1.0, 1.0, 10)], {"a": 100.0})
    assert compare({"p": priced}, None, [], 100, 0, 0.95)["agents"]["p"]["cost_usd_per_query"] == 0.0
    priced.queries.loc[1, "cost_usd"] = None
    assert compare({"p": priced}, None, [], 100, 0, 0.95)["agents"]["p"]["cost_usd_per_query"] is None


def test_an_agent_run_in_epochs_is_compared_on_each_querys_mean_over_its_scored_runs():
    runs = agent([("a", "1", "answered", 1.0, 4.0, 0), ("a", "2", "answered", 1.0, 8.0, 0),
                  ("a", "1", "answered", 0.0, 2.0, 0), ("a", "2", "infra_error", 0.0, 100.0, 0)],
                 {"a": 75.0})
    runs = ScoredAgent(runs.summary, runs.tasks, runs.queries.assign(epoch=[0, 0, 1, 1]))
    assert runs.q_values() == {"a": {"1": 0.5, "2": 1.0}}
    assert cost_ratio(runs, BASE, "wall_seconds") == 2.75  # (3/2 + 8/2) / 2; the infra error is skipped
