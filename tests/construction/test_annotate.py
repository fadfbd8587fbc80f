"""Verification keeps the re-run of a kept query (for the oracle), and nothing of a discarded one."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import yaml
from scibench_testing.limits import limits_with

from benchmarks.runs import number_task
from stages.catalog import TaskSpec
from stages.construction import annotate
from stages.construction.annotate import Label
from stages.construction.drawing import Discard, Query
from stages.evaluation.program import Attempt
from stages.evaluation.verify_run import read_verify_run
from stages.layout import verify_run_dir

QUERY = Query("q-0001", "mean-x", "h1", "all", "attribute", "", 4, date(2000, 1, 1), date(2000, 12, 31),
              "Report the mean of x.")
SPEC = TaskSpec.model_validate(yaml.safe_load(number_task("mean-x")))
GOLD = Label({"answer": 2.5})


def rerun(monkeypatch, answer: str) -> Attempt:
    """Make the annotator's re-run hand in `answer`."""
    attempt = Attempt(answer_text=answer, exit_code=0, timed_out=False, infra_error=None, wall_seconds=0.8,
                      stdout="mean 2.5\n", stderr="")
    monkeypatch.setattr(annotate, "run_annotator", lambda task, query, task_dir, limits, hidden, warm: attempt)
    return attempt


def test_a_verified_query_keeps_its_re_run_in_its_private_folder(tmp_path: Path, monkeypatch):
    attempt = rerun(monkeypatch, '{"answer": 2.5}')
    assert annotate.verify_query(SPEC, QUERY, GOLD, tmp_path, limits_with(), [], 1e-6, "id") is None
    folder = verify_run_dir(tmp_path / "private", QUERY.query_id)
    assert folder == tmp_path / "private" / "q-0001" / "verify_run"
    assert read_verify_run(folder) == replace(attempt, wall_seconds=0.0)


def test_a_discarded_query_keeps_no_re_run(tmp_path: Path, monkeypatch):
    rerun(monkeypatch, '{"answer": 3.0}')
    assert annotate.verify_query(SPEC, QUERY, GOLD, tmp_path, limits_with(), [], 1e-6, "id") == Discard(
        "mean-x", "all", "verify", "re-run does not reproduce the gold within rel_tol=1e-06", "q-0001")
    assert not (tmp_path / "private").exists()
