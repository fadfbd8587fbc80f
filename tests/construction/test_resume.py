"""The construct flow's resume store: finished labels and verifications are reused, stale ones never."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest
import yaml
from scibench_testing.limits import limits_with

import flows.construct as construct
from stages.construction import annotate, resume
from stages.construction.annotate import Label
from stages.construction.drawing import Discard, Query
from stages.evaluation.program import Attempt
from stages.evaluation.verify_run import write_verify_run
from stages.layout import BENCHMARK, task_dir, verify_run_dir
from stages.sandbox import Collected, Limits

QUERY = Query("q-0001", "control-demo", "h1", "all", "attribute", "", 4, date(2000, 1, 1),
              date(2000, 12, 31), "Estimate the slope.")
LIMITS = limits_with()
ABOUT = {"task_id": "control-demo", "scope": "all", "query_id": "q-0001", "seconds": 1.5}
KEPT = Attempt(answer_text='{"answer": 2.0}', exit_code=0, timed_out=False, infra_error=None, wall_seconds=2.5,
               stdout="fit\n", stderr="", files={"bootstrap.json": Collected(b'{"values": [2.0]}', None)})
SPEC = type("Spec", (), {"artifact": None, "checkpoints": [],
                       "answer": type("Answer", (), {"hypothesis": None})()})()


@pytest.fixture
def task(tmp_path: Path) -> Path:
    """A staged task folder: one query's public file and truth, and an annotator folder."""
    folder = tmp_path / "task"
    (folder / "public" / QUERY.query_id).mkdir(parents=True)
    (folder / "public" / QUERY.query_id / "series.csv").write_text("t,y\n1,2\n")
    (folder / "private" / QUERY.query_id).mkdir(parents=True)
    (folder / "private" / QUERY.query_id / "truth.json").write_text('{"slope": 2}')
    (folder / "private" / "annotator").mkdir()
    (folder / "private" / "annotator" / "reproduce.py").write_text("print('fit')\n")
    return folder


def key(folder: Path, limits: Limits = LIMITS) -> str:
    return resume.label_key(folder, QUERY, limits, ())


def test_the_key_changes_with_every_input_of_a_label(task: Path):
    before = key(task)
    assert key(task) == before
    changes = [task / "public" / QUERY.query_id / "series.csv", task / "private" / QUERY.query_id / "truth.json",
               task / "private" / "annotator" / "reproduce.py"]
    seen = {before}
    for path in changes:
        original = path.read_text()
        path.write_text(original + " ")
        seen.add(key(task))
        path.write_text(original)
    assert key(task) == before
    seen.add(key(task, limits_with(wall_seconds=1.0)))
    seen.add(resume.label_key(task, QUERY, limits_with(), ("artifact.csv",)))
    (task / "public" / QUERY.query_id / "extra.csv").write_text("")
    seen.add(key(task))
    assert len(seen) == 7


def test_labels_and_verifications_round_trip(tmp_path: Path):
    store = resume.ResumeStore(tmp_path / "store")
    gold = Label({"answer": 1.5}, {"answer": 1.5}, 0.1, 0.02)
    store.put_label("a" * 32, gold, None, ABOUT)
    discarded = Discard("control-demo", "all", "label", "annotator script exited 1: boom", "q-0001")
    store.put_label("b" * 32, None, discarded, ABOUT)
    assert store.label("a" * 32) == (gold, None)
    assert store.label("b" * 32) == (None, discarded)
    assert store.label("c" * 32) is None
    store.put_verification("d" * 32, None, ABOUT)
    assert store.verification("d" * 32) == (True, None)
    assert store.verification("e" * 32) == (False, None)
    assert not list((tmp_path / "store").rglob("*.tmp"))
    assert store.summary() == {"control-demo": {"staged": 0, "stage_discards": 0, "labelled": 1,
                                                "label_discards": 1, "verified": 1, "verify_discards": 0,
                                                "stage_seconds": 0.0, "seconds": 4.5}}


@pytest.mark.parametrize("reason", ["sandbox failed: bwrap: no permissions", "annotator script timed out",
                                    "re-run: annotator script timed out"])
def test_machine_failures_are_not_stored(tmp_path: Path, reason: str):
    store = resume.ResumeStore(tmp_path / "store")
    discard = Discard("control-demo", "all", "verify", reason, "q-0001")
    store.put_label("a" * 32, None, discard, ABOUT)
    store.put_verification("b" * 32, discard, ABOUT)
    assert store.label("a" * 32) is None
    assert store.verification("b" * 32) == (False, None)


def test_a_torn_entry_is_a_miss(tmp_path: Path):
    store = resume.ResumeStore(tmp_path / "store")
    store.put_label("a" * 32, Label({"answer": 1}), None, ABOUT)
    path = tmp_path / "store" / "aa" / f"{'a' * 32}.json"
    path.write_text(path.read_text()[:7])
    assert store.label("a" * 32) is None


def test_without_a_folder_nothing_is_kept(tmp_path: Path):
    store = resume.ResumeStore(None)
    store.put_label("a" * 32, Label({"answer": 1}), None, ABOUT)
    assert store.label("a" * 32) is None


def test_the_flow_runs_an_annotator_once_per_unchanged_query(task: Path, tmp_path: Path, monkeypatch):
    root = tmp_path / "project"  # the label task finds the query's folder under the root it is given
    folder = task_dir(root / BENCHMARK, QUERY.task_id)
    folder.parent.mkdir(parents=True)
    task = task.rename(folder)
    runs = []

    def label_query(spec, query, folder, limits, hidden, key, warm):
        runs.append(("label", folder))
        return Label({"answer": 2.0}), None

    def verify_query(spec, query, gold, folder, limits, hidden, rel_tol, key, warm):
        runs.append(("verify", folder))
        write_verify_run(verify_run_dir(folder / "private", query.query_id), KEPT)
        return None

    monkeypatch.setattr(annotate, "label_query", label_query)
    monkeypatch.setattr(annotate, "verify_query", verify_query)
    monkeypatch.setattr(construct, "verify", construct.verify.fn)  # label runs verify as a nested task
    store = resume.ResumeStore(tmp_path / "store")
    run = task / "private" / QUERY.query_id / "verify_run"
    written = None
    for _ in range(2):
        labelled = construct.label.fn(QUERY, SPEC, limits_with(), [], "id", 1e-6, store, root)
        assert labelled == (Label({"answer": 2.0}), None)
        written = written or files(run)
        shutil.rmtree(run)  # the next build starts from an empty benchmark
    assert runs == [("label", task), ("verify", task)]
    construct.label.fn(QUERY, SPEC, limits_with(), [], "id", 1e-6, store, root)
    assert files(run) == written and b'"answer_text": "{\\"answer\\": 2.0}"' in written["run.json"]
    (task / "public" / QUERY.query_id / "series.csv").write_text("t,y\n1,3\n")
    construct.label.fn(QUERY, SPEC, limits_with(), [], "id", 1e-6, store, root)
    assert runs == [("label", task), ("verify", task)] * 2


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_passed_verification_keeps_its_verify_run_and_restores_it(tmp_path: Path):
    store = resume.ResumeStore(tmp_path / "store")
    write_verify_run(tmp_path / "built" / "verify_run", KEPT)
    store.put_verification("d" * 32, None, ABOUT, tmp_path / "built" / "verify_run")
    assert store.verification("d" * 32, tmp_path / "rebuilt" / "verify_run") == (True, None)
    assert files(tmp_path / "rebuilt" / "verify_run") == files(tmp_path / "built" / "verify_run")
    assert not list((tmp_path / "store").rglob("*.tmp"))
    store.put_verification("e" * 32, None, ABOUT)  # an entry without its run (or whose copy was lost)
    assert store.verification("e" * 32, tmp_path / "again" / "verify_run") == (False, None)
    assert not (tmp_path / "again").exists()


def test_the_label_code_is_the_construct_stage_code(tmp_path: Path):
    deps = yaml.safe_load((resume.PROJECT_CODE / "dvc.yaml").read_text())["stages"]["construct"]["deps"]
    code = [dep for dep in deps if dep.startswith(("stages/", "flows/"))]
    assert sorted(code) == sorted(resume.LABEL_CODE)
    assert len(resume.harness_hash()) == 16


def test_a_new_library_version_is_a_miss(task: Path, monkeypatch):
    before = key(task)
    resume.harness_hash.cache_clear()
    real = resume.metadata.version
    monkeypatch.setattr(resume.metadata, "version",
                        lambda name: "99.0" if name == "scikit-learn" else real(name))
    try:
        assert key(task) != before
    finally:
        resume.harness_hash.cache_clear()
