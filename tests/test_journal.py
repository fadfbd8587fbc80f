from pathlib import Path

import pytest

from stages.journal import Journal, JournalRecord, record_key


def record(query_id: str, infra_error: str | None = None) -> JournalRecord:
    return JournalRecord(
        key=record_key("t1", query_id, "a1", None), query_id=query_id, task_id="task",
        agent="oracle", agent_hash="a1", benchmark_id="b-1", exit_code=0, timed_out=False,
        infra_error=infra_error, answer_text='{"answer": 1}', attempts=1, wall_seconds=0.5,
    )


def test_records_survive_reopen_in_order(tmp_path: Path):
    journal = Journal(tmp_path / "j.jsonl")
    journal.append(record("q1"))
    journal.append(record("q2"))
    assert [r.query_id for r in Journal(tmp_path / "j.jsonl").records()] == ["q1", "q2"]


def test_partial_last_line_from_a_kill_is_cut_on_open(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    journal.append(record("q1"))
    with open(path, "a") as handle:
        handle.write(record("q2").model_dump_json()[:40])
    reopened = Journal(path)
    assert [r.query_id for r in reopened.records()] == ["q1"]
    reopened.append(record("q3"))
    assert [r.query_id for r in reopened.records()] == ["q1", "q3"]


def test_latest_keeps_the_last_record_of_a_key(tmp_path: Path):
    journal = Journal(tmp_path / "j.jsonl")
    journal.append(record("q1", infra_error="bwrap: setup failed"))
    journal.append(record("q1"))
    latest = journal.latest()
    assert len(latest) == 1
    assert next(iter(latest.values())).infra_error is None


def test_key_changes_with_agent_config_and_model():
    base = record_key("t", "q", "agent-a", None)
    assert record_key("t", "q", "agent-b", None) != base
    assert record_key("t", "q", "agent-a", "model-x") != base
    assert record_key("t", "q", "agent-a", None) == base


def test_a_corrupt_middle_line_is_an_error_naming_the_line(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    path.write_text(record("q1").model_dump_json() + "\nnot json\n")
    with pytest.raises(ValueError, match=r"j.jsonl:2: not a journal record"):
        Journal(path).records()
