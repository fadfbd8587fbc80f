"""What a skipped stage leaves (stages/skipped.py): the reason beside whatever the folder held, gone once it runs."""

from __future__ import annotations

from stages.skipped import clear_skipped, skipped_reason, write_skipped


def test_a_skip_keeps_what_the_folder_held_and_a_run_clears_the_reason(tmp_path):
    runs = tmp_path / "runs" / "aflow-task"
    assert skipped_reason(runs) is None
    runs.mkdir(parents=True)
    (runs / "journal.jsonl").write_text('{"a": "record of an earlier run"}\n')
    write_skipped(runs, "no LLM endpoint configured")
    assert skipped_reason(runs) == "no LLM endpoint configured"
    assert (runs / "journal.jsonl").read_text() == '{"a": "record of an earlier run"}\n'  # never lost
    clear_skipped(runs)
    assert skipped_reason(runs) is None and sorted(p.name for p in runs.iterdir()) == ["journal.jsonl"]
    clear_skipped(runs)  # nothing to clear: no error
