"""A kept query's verify run: the annotator's hand-in at construction, graded again as the oracle's.

Construction re-runs each query's annotator script in a fresh sandbox to verify its gold; for a
kept query that run's hand-in is written to `<task>/private/<query_id>/verify_run/`
(`stages.layout.verify_run_dir`): `run.json` (answer, exit, limits, output tails, and per collected
file its sha256 or why it was not taken) and the collected files' bytes under `files/`. The oracle
agent is the same script on the same files, so with `reuse_verify` it is graded on this hand-in
instead of a third run.

The files depend on the hand-in only (fields in schema order, files by name, no timestamps), so
the same hand-in always writes the same bytes. Its wall seconds are a measurement and are left out:
the benchmark is one DVC output, hashed whole, and a measured value in it would change that hash
on every build.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from stages.evaluation.program import Attempt
from stages.sandbox import Collected

RUN_FILE = "run.json"
FILES = "files"
ORIGIN = "verify run at construction"  # a journal record graded on a kept run names it its origin
NOT_KEPT = "ran the script: the benchmark kept no verify run of this query (built before they were kept)"


class KeptFile(BaseModel):
    """One file the run was asked for: the sha256 of its bytes under `files/`, or why it was not taken."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str | None
    problem: str | None  # "missing" when the script wrote none


class KeptRun(BaseModel):
    """`run.json`: everything of an `Attempt` but its wall seconds and the files' bytes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer_text: str | None
    exit_code: int | None
    timed_out: bool
    infra_error: str | None
    answer_problem: str | None
    limits_hit: list[str]
    stdout: str
    stderr: str
    files: dict[str, KeptFile]


class VerifyRunError(ValueError):
    """A kept verify run is unreadable or its files changed since construction (the benchmark's fault)."""


def write_verify_run(folder: Path, attempt: Attempt) -> None:
    """Keep `attempt` in `folder`, replacing whatever was there."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / FILES).mkdir(parents=True)
    files = {}
    for name, collected in sorted(attempt.files.items()):
        digest = None
        if collected.data is not None:
            (folder / FILES / name).write_bytes(collected.data)
            digest = hashlib.sha256(collected.data).hexdigest()
        files[name] = KeptFile(sha256=digest, problem=collected.problem)
    kept = KeptRun(answer_text=attempt.answer_text, exit_code=attempt.exit_code, timed_out=attempt.timed_out,
                   infra_error=attempt.infra_error, answer_problem=attempt.answer_problem,
                   limits_hit=list(attempt.limits_hit), stdout=attempt.stdout, stderr=attempt.stderr,
                   files=files)
    (folder / RUN_FILE).write_text(kept.model_dump_json(indent=2) + "\n", encoding="utf-8")


def read_verify_run(folder: Path) -> Attempt | None:
    """The kept run as an `Attempt` (0 wall seconds: nothing runs now), or None when none was kept.

    Raises:
        VerifyRunError: `run.json` does not parse, or a file is gone or not the bytes it names.
    """
    try:
        kept = KeptRun.model_validate_json((folder / RUN_FILE).read_bytes())
    except FileNotFoundError:
        return None
    except ValueError as error:
        raise VerifyRunError(f"{folder / RUN_FILE}: {str(error).splitlines()[0]}") from error
    files = {}
    for name, entry in kept.files.items():
        data = None
        if entry.sha256 is not None:
            path = folder / FILES / name
            data = path.read_bytes() if path.is_file() else None
            if data is None or hashlib.sha256(data).hexdigest() != entry.sha256:
                raise VerifyRunError(f"{path}: not the bytes kept at construction")
        files[name] = Collected(data, entry.problem)
    return Attempt(answer_text=kept.answer_text, exit_code=kept.exit_code, timed_out=kept.timed_out,
                   infra_error=kept.infra_error, wall_seconds=0.0, stdout=kept.stdout, stderr=kept.stderr,
                   limits_hit=tuple(kept.limits_hit), answer_problem=kept.answer_problem, files=files)
