import json

import pytest

from stages.scoring.aggregate.summary import (
    TaskScore,
    delta_perf,
    efficiency,
    score_task,
    summarize,
    task_scores,
    win_rate,
)
from stages.scoring.query.outcomes import Outcome
from stages.scoring.query.scorer import QueryScore


def q(outcome: Outcome, pass_rate=0.0, reward=0.0, exec_ok=True) -> QueryScore:
    return QueryScore(outcome, exec_ok, {}, pass_rate, reward)


NO_OUTCOMES = {outcome.value: 0 for outcome in Outcome}


def counts(**nonzero: int) -> dict[str, int]:
    return NO_OUTCOMES | nonzero


def test_score_task_excludes_infra_errors_from_every_denominator():
    task = score_task(
        [
            q(Outcome.ANSWERED, pass_rate=1.0, reward=0.9),
            q(Outcome.ANSWERED, pass_rate=0.5, reward=0.6),
            q(Outcome.TIMEOUT, exec_ok=False),
            q(Outcome.INFRA_ERROR, exec_ok=False),
        ]
    )
    assert task == TaskScore(
        n_queries=4,
        n_scored=3,
        n_infra_error=1,
        success_rate=pytest.approx(2 / 3),
        pass_rate=0.75,
        score=pytest.approx(0.5),
        reward_mean=pytest.approx(0.5),
        outcomes=counts(answered=2, timeout=1, infra_error=1),
    )


def test_task_without_realistic_queries_scores_zero():
    task = score_task([q(Outcome.UNREALISTIC), q(Outcome.UNPARSEABLE)])
    assert (task.success_rate, task.pass_rate, task.score, task.reward_mean) == (0, 0, 0, 0)


def test_task_of_only_infra_errors_is_unmeasured_not_zero():
    task = score_task([q(Outcome.INFRA_ERROR), q(Outcome.INFRA_ERROR)])
    assert (task.n_scored, task.success_rate, task.pass_rate, task.score) == (0, None, None, None)


TWO_TASKS = {
    "b-task": [
        q(Outcome.ANSWERED, pass_rate=0.0, reward=0.1),
        q(Outcome.NO_OUTPUT),
    ],
    "a-task": [
        q(Outcome.ANSWERED, pass_rate=1.0, reward=1.0),
        q(Outcome.ANSWERED, pass_rate=0.5, reward=0.6, exec_ok=False),
        q(Outcome.UNPARSEABLE),
        q(Outcome.INFRA_ERROR, exec_ok=False),
    ],
}


def test_summarize_two_tasks_by_hand():
    # a-task: success 2/3, pass (1 + 0.5)/2 = 0.75 -> score 0.5; reward (1 + 0.6 + 0)/3
    # b-task: success 1/2, pass 0 -> score 0; reward (0.1 + 0)/2
    # system: 100 * mean(0.5, 0) = 25; pooled over the 5 scored queries:
    # exec 4/5, realistic 3/5, pass | realistic (1 + 0.5 + 0)/3, reward (1 + 0.6 + 0.1)/5
    assert summarize(TWO_TASKS) == {
        "score": 25.0,
        "n_tasks": 2,
        "n_queries": 6,
        "outcomes": counts(answered=3, no_output=1, unparseable=1, infra_error=1),
        "exec_rate": 0.8,
        "realistic_rate": 0.6,
        "pass_rate_given_realistic": 0.5,
        "reward_mean": 0.34,
        "tasks": {
            "a-task": {
                "score": 50.0,
                "success_rate": 0.666667,
                "pass_rate": 0.75,
                "reward_mean": 0.533333,
                "n_queries": 4,
                "outcomes": counts(answered=2, unparseable=1, infra_error=1),
            },
            "b-task": {
                "score": 0.0,
                "success_rate": 0.5,
                "pass_rate": 0.0,
                "reward_mean": 0.05,
                "n_queries": 2,
                "outcomes": counts(answered=1, no_output=1),
            },
        },
    }


def test_summary_serialises_with_sorted_keys():
    text = json.dumps(summarize(TWO_TASKS), sort_keys=True)
    assert list(json.loads(text)["tasks"]) == ["a-task", "b-task"]
    assert text.startswith('{"exec_rate": 0.8, "n_queries": 6, "n_tasks": 2, "outcomes": {')


def test_unmeasured_task_is_left_out_of_the_system_score():
    summary = summarize(TWO_TASKS | {"c-task": [q(Outcome.INFRA_ERROR)]})
    assert (summary["score"], summary["n_tasks"]) == (25.0, 3)
    assert summary["tasks"]["c-task"]["score"] is None


def test_summarize_nothing():
    summary = summarize({})
    assert (summary["score"], summary["realistic_rate"], summary["tasks"]) == (None, None, {})


SYSTEM = {"a": 50.0, "b": 0.0, "c": 30.0, "e": None}
BASELINE = {"a": 40.0, "b": 0.0, "d": 10.0, "e": 5.0}


def test_win_rate_counts_strict_wins_over_tasks_scored_in_both():
    assert win_rate(SYSTEM, BASELINE) == 0.5  # a wins, b ties; c, d, e are not paired


def test_delta_perf_is_the_mean_gain_over_paired_tasks():
    assert delta_perf(SYSTEM, BASELINE) == 5.0


def test_comparisons_need_a_common_task():
    with pytest.raises(ValueError, match=r"^no task is scored in both the system and the baseline$"):
        delta_perf({"a": 1.0}, {"b": 1.0})


@pytest.mark.parametrize(
    ("delta", "cost_ratio", "expected"),
    [
        (5.0, 1.5, 10.0),
        (5.0, 3.0, 2.5),
        (5.0, 1.02, 50.0),
        (5.0, 0.5, 50.0),
        (-2.8, 5.5, -2.8 / 4.5),
    ],
)
def test_efficiency_clips_the_extra_cost_at_one_tenth(delta, cost_ratio, expected):
    assert efficiency(delta, cost_ratio) == pytest.approx(expected)


def test_task_scores_feed_the_comparisons():
    ours = summarize(TWO_TASKS)
    theirs = summarize({"a-task": [q(Outcome.NO_OUTPUT)], "b-task": [q(Outcome.NO_OUTPUT)]})
    assert task_scores(ours) == {"a-task": 50.0, "b-task": 0.0}
    assert win_rate(task_scores(ours), task_scores(theirs)) == 0.5
    assert delta_perf(task_scores(ours), task_scores(theirs)) == 25.0


# Each outcome beside one answered query that passes (reward 0.8, exit 0): its effect on every
# denominator. Columns: success_rate, pass_rate, score, reward_mean, exec_rate, realistic_rate.
EFFECTS = {
    Outcome.ANSWERED: (1.0, 0.5, 50.0, 0.4, 1.0, 1.0),  # the second answered query passes nothing
    Outcome.UNREALISTIC: (0.5, 1.0, 50.0, 0.4, 1.0, 0.5),
    Outcome.UNPARSEABLE: (0.5, 1.0, 50.0, 0.4, 1.0, 0.5),
    Outcome.NO_OUTPUT: (0.5, 1.0, 50.0, 0.4, 1.0, 0.5),
    Outcome.EXEC_ERROR: (0.5, 1.0, 50.0, 0.4, 0.5, 0.5),
    Outcome.TIMEOUT: (0.5, 1.0, 50.0, 0.4, 0.5, 0.5),
    Outcome.INFRA_ERROR: (1.0, 1.0, 100.0, 0.8, 1.0, 1.0),  # left out of every rate
}


@pytest.mark.parametrize("outcome", list(Outcome))
def test_each_outcome_has_a_pinned_effect_on_every_denominator(outcome):
    exec_ok = outcome not in (Outcome.EXEC_ERROR, Outcome.TIMEOUT)
    other = q(outcome, pass_rate=0.0, reward=0.0, exec_ok=exec_ok)
    summary = summarize({"t": [q(Outcome.ANSWERED, 1.0, 0.8), other]})
    task = summary["tasks"]["t"]
    assert (task["success_rate"], task["pass_rate"], task["score"], task["reward_mean"], summary["exec_rate"],
            summary["realistic_rate"]) == EFFECTS[outcome]
    assert summary["outcomes"][outcome.value] == 1 + (outcome is Outcome.ANSWERED)
    assert summary["n_queries"] == task["n_queries"] == 2
