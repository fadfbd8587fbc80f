from flows.evaluate import describe, run_summary, run_table
from stages.evaluation.journal import JournalRecord


def record(query_id: str, attempts: int = 1, infra_error: str | None = None,
           limits: tuple[str, ...] = ()) -> JournalRecord:
    return JournalRecord(key=query_id, query_id=query_id, task_id="t", agent="a", agent_hash="h",
                         benchmark_id="b", exit_code=0, timed_out="wall" in limits, infra_error=infra_error,
                         answer_text=None, attempts=attempts, wall_seconds=1.0, limits_hit=list(limits))


def test_the_summary_counts_this_split_only():
    summary = run_summary("val", 20, [record("q1"), record("q2", limits=("wall",))])
    assert summary == {"split": "val", "queries": 20, "epochs": 1, "ran": 2, "already_done": 18, "infra_errors": 0,
                       "infra_retries": 0, "limits_hit": {"wall": 1}, "reused": {}}
    assert describe("oracle", summary) == ("evaluate@oracle on val: 20 queries, ran 2, 18 already in the journal; "
                                           "limits hit {'wall': 1}")


def test_with_epochs_the_summary_counts_runs():
    summary = run_summary("test", 4, [record("q1"), record("q2"), record("q1")], epochs=3)
    assert (summary["queries"], summary["epochs"], summary["ran"], summary["already_done"]) == (4, 3, 3, 9)
    assert describe("react", summary) == "evaluate@react on test: 4 queries x 3 epochs, ran 3, 9 already in the journal"


def test_a_fresh_split_has_nothing_already_done_and_infra_errors_are_named():
    summary = run_summary("test", 2, [record("q1", attempts=3, infra_error="sandbox"), record("q2", attempts=2)])
    assert (summary["ran"], summary["already_done"], summary["infra_errors"], summary["infra_retries"]) == (2, 0, 1, 3)
    assert describe("x", summary) == ("evaluate@x on test: 2 queries, ran 2, 0 already in the journal; 1 infra "
                                      "errors left after 3 retries (never scored; rerun to retry)")


def test_records_graded_on_a_kept_run_are_counted_by_origin():
    reused = record("q1").model_copy(update={"reused_from": "verify run at construction"})
    summary = run_summary("test", 3, [reused, record("q2")])
    assert summary["reused"] == {"verify run at construction": 1}
    assert describe("oracle", summary) == ("evaluate@oracle on test: 3 queries, ran 2, 1 already in the journal; "
                                           "1 of them graded on the hand-in of the verify run at construction, "
                                           "not run again")


def test_the_run_table_counts_per_task_in_task_order():
    records = [record("q1"), record("q2", limits=("wall",)), record("q3", infra_error="sandbox")]
    records[2] = records[2].model_copy(update={"task_id": "a", "wall_seconds": 4.0})
    assert run_table(records) == [
        {"task": "a", "ran": 1, "exit 0": 1, "answer.json": 0, "timeouts": 0, "infra errors": 1, "median wall s": 4.0},
        {"task": "t", "ran": 2, "exit 0": 2, "answer.json": 0, "timeouts": 1, "infra errors": 0,
         "median wall s": 1.0}]
