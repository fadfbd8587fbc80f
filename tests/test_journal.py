import errno
import subprocess
import sys
import textwrap
from pathlib import Path

from stages.journal import Journal, JournalRecord, encode_record, record_key

ROOT = Path(__file__).resolve().parents[1]


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
        from stages.journal import Journal, JournalWriteError
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from test_journal import record
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({len(first) + 10}, resource.RLIM_INFINITY))
        try:
            Journal(Path({str(path)!r})).append(record("q2"))
        except JournalWriteError as error:
            print("JournalWriteError", error.errno)
    """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert done.stdout == f"JournalWriteError {errno.EFBIG}\n", done.stderr
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
