import pandas as pd
from scibench_testing.graded import graded_task, metric

from stages.catalog import Tags
from stages.evaluation.journal import JournalRecord, Usage, UsageTotals
from stages.scoring.aggregate.suite import (
    COLUMNS,
    cuts,
    error_attribution,
    exact_match,
    infra,
    query_frame,
    suite,
    summarize_verdicts,
    usage,
)
from stages.scoring.query.outcomes import Outcome
from stages.scoring.query.reasonableness import Verdict
from stages.scoring.query.scorer import QueryScore


def record(query_id: str, wall: float, tokens: int = 0, attempts: int = 1) -> JournalRecord:
    return JournalRecord(key=query_id, query_id=query_id, task_id="t", agent="a", agent_hash="h",
                         benchmark_id="b", exit_code=0, timed_out=False, infra_error=None, answer_text="{}",
                         attempts=attempts, wall_seconds=wall, tokens=tokens, cost_usd=tokens * 1e-6)


def score(outcome: Outcome, pass_rate: float = 0.0) -> QueryScore:
    return QueryScore(outcome, outcome is Outcome.ANSWERED, {}, pass_rate, pass_rate / 2)


def frame(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    """(task, query, outcome, q) rows with one second of wall time each and no tokens."""
    return pd.DataFrame([{"task_id": t, "query_id": q, "outcome": o, "q": v, "reward": v / 2,
                          "exec_ok": True, "wall_seconds": 1.0, "agent_seconds": 1.0, "tokens": 0,
                          "cost_usd": 0.0, "attempts": 1, "agent_limit": None} for t, q, o, v in rows],
                        columns=COLUMNS)


def spec(task_id: str, domain: str, difficulty: str, capability: list[str]):
    task = graded_task([metric("nse", "nse", "qsim_mm_d")], task_id=task_id)
    return task.model_copy(update={"domain": domain, "difficulty": difficulty,
                                   "tags": Tags(capability=capability)})


def test_the_query_frame_joins_scores_with_what_each_run_cost():
    scored = {"t": [("q1", score(Outcome.ANSWERED, 1.0)), ("q2", score(Outcome.TIMEOUT))]}
    table = query_frame(scored, {"q1": record("q1", 2.5, tokens=100), "q2": record("q2", 9.0, attempts=3)})
    assert table[["query_id", "outcome", "q", "reward", "wall_seconds", "agent_seconds", "tokens", "attempts"]
                 ].to_dict("records") == [
        {"query_id": "q1", "outcome": "answered", "q": 1.0, "reward": 0.5, "wall_seconds": 2.5,
         "agent_seconds": 2.5, "tokens": 100, "attempts": 1},
        {"query_id": "q2", "outcome": "timeout", "q": 0.0, "reward": 0.0, "wall_seconds": 9.0,
         "agent_seconds": 9.0, "tokens": 0, "attempts": 3}]


def test_errors_are_attributed_by_outcome_and_infra_errors_are_not_failures():
    table = frame([("t", "1", "answered", 1.0), ("t", "2", "answered", 0.5), ("t", "3", "unparseable", 0.0),
                   ("t", "4", "no_output", 0.0), ("t", "5", "exec_error", 0.0), ("t", "6", "infra_error", 0.0),
                   ("t", "7", "unrealistic", 0.0), ("t", "8", "timeout", 0.0)])
    assert error_attribution(table) == {
        "counts": {"alignment": 3, "modeling": 2, "reasoning": 1},
        "shares": {"alignment": 0.5, "modeling": 0.333333, "reasoning": 0.166667}}
    assert error_attribution(frame([("t", "1", "answered", 1.0)]))["shares"] == {
        "alignment": None, "modeling": None, "reasoning": None}


def test_infra_counts_retries_and_errors_apart():
    table = frame([("t", "1", "answered", 1.0), ("t", "2", "infra_error", 0.0), ("t", "3", "answered", 0.0)])
    table["attempts"] = [1, 3, 2]
    assert infra(table) == {"retried_queries": 2, "extra_attempts": 3, "infra_error_queries": 1}


def test_usage_totals_include_infra_errors_and_count_limits():
    table = frame([("t", "1", "answered", 1.0), ("t", "2", "infra_error", 0.0)])
    table["tokens"] = [10, 5]
    table["agent_limit"] = ["max_turns", None]
    assert usage(table) == {"tokens": 15, "prompt_tokens": None, "completion_tokens": None, "cached_tokens": None,
                            "reasoning_tokens": None, "calls": 0, "cost_usd": 0.0, "wall_seconds": 2.0,
                            "agent_seconds": 2.0, "limits": {"max_turns": 1}, "queries_with_usage_flags": 0,
                            "models_reported": []}


def test_usage_of_proxied_calls_sums_what_servers_reported_and_an_unknown_cost_is_none():
    calls = Usage(total=UsageTotals(prompt_tokens=90, completion_tokens=10, cached_tokens=40, calls=2,
                                    cost_usd=None), flags=["usage missing"])
    unpriced = record("q1", 3.0, tokens=100).model_copy(update={
        "usage": calls, "cost_usd": None, "agent_seconds": 2.0, "model_reported": "m-2026"})
    priced = record("q2", 1.0, tokens=50).model_copy(update={
        "usage": Usage(total=UsageTotals(prompt_tokens=45, completion_tokens=5, calls=1, cost_usd=0.25))})
    scored = {"t": [("q1", score(Outcome.ANSWERED, 1.0)), ("q2", score(Outcome.ANSWERED, 1.0))]}
    table = query_frame(scored, {"q1": unpriced, "q2": priced})
    totals = usage(table)
    assert (totals["prompt_tokens"], totals["completion_tokens"], totals["cached_tokens"], totals["reasoning_tokens"],
            totals["calls"], totals["tokens"]) == (135, 15, 40, None, 3, 150)
    assert (totals["cost_usd"], totals["agent_seconds"], totals["wall_seconds"]) == (None, 3.0, 4.0)
    assert (totals["queries_with_usage_flags"], totals["models_reported"]) == (1, ["m-2026"])
    assert usage(table[table["query_id"] == "q2"])["cost_usd"] == 5e-05  # the record's cost, as journaled


def test_cuts_average_task_scores_per_axis_value_with_intervals():
    specs = {"a": spec("a", "camels", "easy", ["modeling", "discovery"]),
             "b": spec("b", "crops", "easy", ["discovery"])}
    table = frame([("a", "1", "answered", 1.0), ("a", "2", "answered", 1.0), ("b", "1", "answered", 0.0)])
    result = suite(table, {"a": 100.0, "b": 0.0}, specs, resamples=100, level=0.95, seed=0)
    assert result["cuts"]["domain"] == {
        "camels": {"score": 100.0, "score_ci": {"low": 100.0, "high": 100.0, "level": 0.95, "resamples": 100},
                   "n_tasks": 1},
        "crops": {"score": 0.0, "score_ci": None, "n_tasks": 1}}  # one query: no interval
    assert result["cuts"]["difficulty"]["easy"]["score"] == 50.0
    assert result["cuts"]["capability"]["discovery"]["n_tasks"] == 2
    assert result["cuts"]["capability"]["modeling"]["score"] == 100.0
    assert result["cuts"]["mas_challenge"] == {}
    assert result["score_ci"] is None  # task b has one query


def test_a_task_with_only_infra_errors_has_no_score_in_its_cut():
    specs = {"a": spec("a", "camels", "hard", [])}
    result = cuts({"a": None}, specs, {}, 0.95, 100)
    assert result["domain"]["camels"] == {"score": None, "score_ci": None, "n_tasks": 1}


def test_exact_match_counts_scored_hypothesis_queries_only():
    table = frame([("h", "1", "answered", 1.0), ("h", "2", "answered", 0.0), ("h", "3", "infra_error", 0.0),
                   ("m", "1", "answered", 1.0)])
    table["exec_ok"] = [True, False, False, True]
    assert exact_match(table, {"h"}) == {"n_queries": 2, "rate": 0.5, "exec_rate": 0.5}
    assert exact_match(table, set()) == {"n_queries": 0, "rate": None, "exec_rate": None}


def test_the_summary_counts_outcomes_apart_and_averages_judged_scores_only():
    verdicts = [Verdict(key="1", record_key="r", query_id="q", outcome="judged", score=4, prompt_tokens=10,
                        completion_tokens=2),
                Verdict(key="2", record_key="r", query_id="q", outcome="judged", score=1),
                Verdict(key="3", record_key="r", query_id="q", outcome="judge_unparseable", raw="?", prompt_tokens=7),
                Verdict(key="4", record_key="r", query_id="q", outcome="judge_infra_error", error="HTTP 500")]
    assert summarize_verdicts(verdicts, "judge-2026") == {
        "model": "judge-2026", "judged": 2, "judge_unparseable": 1, "judge_infra_error": 1, "mean": 2.5,
        "judge_prompt_tokens": 17, "judge_completion_tokens": 2}
    assert summarize_verdicts([], None)["mean"] is None
