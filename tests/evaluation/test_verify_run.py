"""A kept verify run: written byte-identically from the same hand-in, read back as the attempt it was."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from stages.evaluation.program import Attempt
from stages.evaluation.verify_run import VerifyRunError, read_verify_run, write_verify_run
from stages.sandbox import Collected

ARTIFACT = b"PAR1 not really parquet \x00\xff"
ATTEMPT = Attempt(answer_text='{"metrics": {"nse": 0.71}}', exit_code=0, timed_out=False, infra_error=None,
                  wall_seconds=12.345, stdout="fitted 3 basins\n", stderr="warning: é\n",
                  limits_hit=("output",),
                  files={"predictions.parquet": Collected(ARTIFACT, None),
                         "features.parquet": Collected(None, "missing"),
                         "aligned.parquet": Collected(None, "a symlink, not a regular file")})


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_same_hand_in_writes_byte_identical_files_whatever_its_wall_seconds(tmp_path: Path):
    write_verify_run(tmp_path / "first", ATTEMPT)
    write_verify_run(tmp_path / "second", replace(ATTEMPT, wall_seconds=99.9))
    first = tree(tmp_path / "first")
    assert first == tree(tmp_path / "second")
    assert sorted(first) == ["files/predictions.parquet", "run.json"]
    assert first["files/predictions.parquet"] == ARTIFACT
    kept = json.loads(first["run.json"])
    assert "wall_seconds" not in kept
    assert kept["files"] == {
        "aligned.parquet": {"sha256": None, "problem": "a symlink, not a regular file"},
        "features.parquet": {"sha256": None, "problem": "missing"},
        "predictions.parquet": {"sha256": "d9238c137a206cf0de8f271cfb14d3aea5743a1d6b2baf91464ae7d38111d3a2",
                                "problem": None}}


def test_a_kept_run_reads_back_as_its_attempt_with_no_wall_seconds(tmp_path: Path):
    write_verify_run(tmp_path / "run", ATTEMPT)
    assert read_verify_run(tmp_path / "run") == replace(ATTEMPT, wall_seconds=0.0)


def test_writing_again_replaces_the_folder(tmp_path: Path):
    write_verify_run(tmp_path / "run", ATTEMPT)
    write_verify_run(tmp_path / "run", replace(ATTEMPT, files={}))
    assert sorted(tree(tmp_path / "run")) == ["run.json"]


def test_a_query_without_a_kept_run_reads_as_none(tmp_path: Path):
    assert read_verify_run(tmp_path / "never-written") is None


def test_a_kept_file_whose_bytes_changed_is_the_benchmarks_fault(tmp_path: Path):
    write_verify_run(tmp_path / "run", ATTEMPT)
    (tmp_path / "run/files/predictions.parquet").write_bytes(ARTIFACT + b"!")
    with pytest.raises(VerifyRunError, match="predictions.parquet: not the bytes kept at construction"):
        read_verify_run(tmp_path / "run")
    (tmp_path / "run/files/predictions.parquet").unlink()
    with pytest.raises(VerifyRunError, match="predictions.parquet: not the bytes kept at construction"):
        read_verify_run(tmp_path / "run")
    (tmp_path / "run/run.json").write_text('{"answer_text": null')
    with pytest.raises(VerifyRunError, match="run.json"):
        read_verify_run(tmp_path / "run")
