import errno
import logging
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from stages.evaluation.journal import Journal, JournalRecord, ModelCall, Usage, UsageTotals, encode_record, record_key

ROOT = Path(__file__).resolve().parents[2]


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


def test_a_corrupt_middle_line_is_reported_and_skipped(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(encode_record(record("q1")) + b"not json\n" + b'{"key": 1}\n\xff\xfe\n'
                     + encode_record(record("q2")))
    journal = Journal(path)
    assert [r.query_id for r in journal.records()] == ["q1", "q2"]
    assert [p.split(": skipped")[0] for p in journal.problems] == [
        f"{path}:2", f"{path}:3", f"{path}:4"]


SEPARATORS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
CONTROLS = "".join(map(chr, range(0x20))) + "\x7f" + "".join(map(chr, range(0x80, 0xA0)))


def test_every_line_separator_and_control_character_survives_a_round_trip(tmp_path: Path):
    text = SEPARATORS + CONTROLS + "\ufeff\ud800\U0001f600 end"
    poisoned = record("q1").model_copy(update={"answer_text": text, "stdout": text, "stderr": text})
    journal = Journal(tmp_path / "j.jsonl")
    journal.append(poisoned)
    journal.append(record("q2"))
    raw = (tmp_path / "j.jsonl").read_bytes()
    assert raw.isascii() and raw.count(b"\n") == 2
    assert Journal(tmp_path / "j.jsonl").records() == [poisoned, record("q2")]
    assert str.splitlines(raw.decode()) == raw.decode().split("\n")[:2]


def test_a_full_disk_during_append_rolls_back_and_leaves_the_journal_readable(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    Journal(path).append(record("q1"))
    first = path.read_bytes()
    # A child whose file-size limit ends the file 10 bytes into the next record: the write is cut
    # short exactly as on a full disk (a partial write, then an error).
    child = textwrap.dedent(f"""
        import resource, signal, sys
        from pathlib import Path
        sys.path.insert(0, {str(ROOT)!r})
        from stages.evaluation.journal import Journal, JournalWriteError
        sys.path.insert(0, {str(ROOT / "tests" / "evaluation")!r})
        from test_journal import record
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({len(first) + 10}, resource.RLIM_INFINITY))
        try:
            Journal(Path({str(path)!r})).append(record("q2"))
        except JournalWriteError as error:
            print("JournalWriteError", error.errno)
            print(error)
    """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert done.stdout == (f"JournalWriteError {errno.EFBIG}\n"
                           f"[Errno {errno.EFBIG}] {path}: append failed, rolled back: File too large\n"), done.stderr
    assert path.read_bytes() == first
    journal = Journal(path)
    journal.append(record("q3"))
    assert [r.query_id for r in journal.records()] == ["q1", "q3"]
    assert journal.problems == []


def test_a_partial_last_line_is_reported(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(encode_record(record("q1")) + b'{"key": "x", "que')
    journal = Journal(path)
    assert journal.problems == [f"{path}: cut a partial last line of 17 bytes (a write cut short)"]
    assert path.read_bytes() == encode_record(record("q1"))


def test_a_missing_or_empty_journal_has_no_records_and_no_problems(tmp_path: Path):
    missing = Journal(tmp_path / "deep" / "er" / "j.jsonl")
    assert (missing.records(), missing.latest(), missing.problems) == ([], {}, [])
    assert (tmp_path / "deep" / "er").is_dir() and not (tmp_path / "deep" / "er" / "j.jsonl").exists()
    (tmp_path / "empty.jsonl").write_bytes(b"")
    empty = Journal(tmp_path / "empty.jsonl")
    assert (empty.records(), empty.problems) == ([], [])
    assert (tmp_path / "empty.jsonl").read_bytes() == b""


def test_a_journal_of_one_newline_is_left_alone(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"\n")
    journal = Journal(path)
    assert (journal.records(), journal.problems, path.read_bytes()) == ([], [], b"\n")


def test_blank_lines_are_skipped_silently(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"\n" + encode_record(record("q1")) + b"\n  \n\t\n" + encode_record(record("q2")) + b"\n")
    journal = Journal(path)
    assert [r.query_id for r in journal.records()] == ["q1", "q2"]
    assert journal.problems == []


def test_only_the_partial_line_after_the_last_newline_is_cut(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    complete = encode_record(record("q1")) + encode_record(record("q2"))
    path.write_bytes(complete + b'{"key": "x"')
    journal = Journal(path)
    assert path.read_bytes() == complete
    assert journal.problems == [f"{path}: cut a partial last line of 11 bytes (a write cut short)"]
    assert [r.query_id for r in journal.records()] == ["q1", "q2"]


def test_a_journal_that_is_one_partial_line_is_cut_to_nothing(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"{")
    assert Journal(path).problems == [f"{path}: cut a partial last line of 1 bytes (a write cut short)"]
    assert path.read_bytes() == b""


def test_each_problem_is_logged_as_a_warning(tmp_path: Path, caplog):
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"not json\n{")
    with caplog.at_level(logging.WARNING, logger="stages.evaluation.journal"):
        journal = Journal(path)
        journal.records()
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", f"{path}: cut a partial last line of 1 bytes (a write cut short)"),
        ("WARNING", f"{path}:1: skipped, not a journal record: Expecting value: line 1 column 1 (char 0)"),
    ]
    assert journal.problems == [r.getMessage() for r in caplog.records]


def test_unreadable_lines_are_named_with_the_first_line_of_the_error(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"not json\n" + b'{"key": 1}\n' + encode_record(record("q1")) + b"[" * 100_000 + b"\n")
    journal = Journal(path)
    assert [r.query_id for r in journal.records()] == ["q1"]
    assert journal.problems == [
        f"{path}:1: skipped, not a journal record: Expecting value: line 1 column 1 (char 0)",
        f"{path}:2: skipped, not a journal record: 12 validation errors for JournalRecord",
        f"{path}:4: skipped, not a journal record: maximum recursion depth exceeded while decoding a JSON array "
        "from a unicode string",
    ]


def test_a_record_is_one_ascii_json_line_with_fields_in_schema_order():
    poisoned = record("q1").model_copy(update={"stdout": "é\u2028\n", "model": "m", "limits_hit": ["wall"]})
    assert encode_record(poisoned) == (
        b'{"key": "759e7c63534e6e9cb2d9d467", "query_id": "q1", "task_id": "task", "agent": "oracle", '
        b'"agent_hash": "a1", "model": "m", "benchmark_id": "b-1", "exit_code": 0, "timed_out": false, '
        b'"infra_error": null, "answer_text": "{\\"answer\\": 1}", "attempts": 1, "wall_seconds": 0.5, '
        b'"limits_hit": ["wall"], "answer_problem": null, "artifact_sha256": null, "artifact_problem": null, '
        b'"checkpoints": {}, '
        b'"tokens": 0, "cost_usd": 0.0, '
        b'"stdout": "\\u00e9\\u2028\\n", "stderr": "", "usage": null, "agent_seconds": null, '
        b'"agent_limit": null, "execution": null, "model_reported": null, "reused_from": null, '
        b'"transcript_sha256": null, "epoch": 0}\n')


def test_the_key_is_a_24_character_hash_that_does_not_change_between_versions():
    # A changed key would make a resumed run redo every finished query.
    assert record_key("t1", "q1", "a1", None) == "759e7c63534e6e9cb2d9d467"
    assert record_key("t1", "q1", "a1", "m") == "b83fab4f4c087a64119f3a32"


def test_epoch_zero_keeps_the_key_of_a_single_run_and_every_other_epoch_has_its_own():
    # A journal written before repeated runs existed is the first epoch of the same runs.
    assert record_key("t1", "q1", "a1", "m", epoch=0) == "b83fab4f4c087a64119f3a32"
    keys = {record_key("t1", "q1", "a1", "m", epoch) for epoch in range(5)}
    assert len(keys) == 5 and all(len(key) == 24 for key in keys)
    assert record_key("t1", "q1", "a1", "m", 3) == record_key("t1", "q1", "a1", "m", 3)


def test_latest_keeps_first_seen_key_order_and_the_last_record_of_each(tmp_path: Path):
    journal = Journal(tmp_path / "j.jsonl")
    first, other, retried = record("q1", infra_error="first"), record("q2"), record("q1", infra_error=None)
    for item in (first, other, retried):
        journal.append(item)
    assert list(journal.latest().items()) == [(first.key, retried), (other.key, other)]


def test_a_new_journal_file_is_readable_by_everyone_and_writable_by_its_owner(tmp_path: Path):
    umask = os.umask(0)
    try:
        Journal(tmp_path / "j.jsonl").append(record("q1"))
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "j.jsonl").stat().st_mode) == 0o644


def test_appends_from_many_threads_are_whole_lines(tmp_path: Path):
    journal = Journal(tmp_path / "j.jsonl")
    big = "x" * 200_000  # larger than a pipe buffer or a page: one write may not be atomic
    items = [record(f"q{i}").model_copy(update={"stdout": big}) for i in range(40)]
    threads = [threading.Thread(target=journal.append, args=(item,)) for item in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    reread = Journal(tmp_path / "j.jsonl")
    assert sorted(r.query_id for r in reread.records()) == sorted(f"q{i}" for i in range(40))
    assert reread.problems == []
    assert (tmp_path / "j.jsonl").read_bytes().count(b"\n") == 40


def test_a_line_written_before_the_usage_fields_still_parses(tmp_path: Path):
    old = ('{"key": "k", "query_id": "q1", "task_id": "task", "agent": "oracle", "agent_hash": "a1", '
           '"model": null, "benchmark_id": "b-1", "exit_code": 0, "timed_out": false, "infra_error": null, '
           '"answer_text": null, "attempts": 1, "wall_seconds": 0.5, "tokens": 0, "cost_usd": 0.0}\n')
    (tmp_path / "journal.jsonl").write_text(old)
    (parsed,) = Journal(tmp_path / "journal.jsonl").records()
    assert (parsed.usage, parsed.agent_seconds, parsed.agent_limit, parsed.execution, parsed.cost_usd,
            parsed.reused_from) == (None, None, None, None, 0.0, None)


def test_a_record_with_model_usage_round_trips(tmp_path: Path):
    usage = Usage(calls=[ModelCall(role="planner", status=200, latency_seconds=0.2, prompt_tokens=10,
                                   completion_tokens=2, cost_usd=None, flags=["unknown_price"])],
                  total=UsageTotals(calls=1, prompt_tokens=10, completion_tokens=2, cost_usd=None))
    full = record("q1").model_copy(update={"usage": usage, "cost_usd": None, "agent_limit": "max_turns",
                                           "agent_seconds": 0.4, "execution": "persistent sandbox per query"})
    journal = Journal(tmp_path / "journal.jsonl")
    journal.append(full)
    assert journal.records() == [full]
