"""Formalize & label, and verify: run the annotator reproduction script like an agent, twice.

The annotator sees exactly what an agent sees (the query's public files and prompt, in the same
sandbox). What it hands in is graded like an agent's hand-in:
- a graded task's gold is the harness's recomputation of the annotator's artifact against the
  hidden truth (the annotator never sees the truth);
- a hypothesis task's gold is the annotator's answer; with a bootstrap spec, the annotator also
  writes `work/bootstrap.json` (the statistic on resamples of the scope's entities), from which the
  query's tolerance is set, or the query is discarded as unstable.
A task with checkpoints (`TaskSpec.checkpoints`) has the annotator write them too; they are kept
with the gold, as JSON records, for `stages.scoring.query.attribution`.
Verification re-runs the script in a fresh sandbox and checks that it reproduces the gold within
tolerance (and its checkpoints) and that the gold clears the task's own targets (including its
reference models). A kept query's re-run is kept with its private files, where the oracle agent is
graded on it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from stages.catalog import TaskSpec
from stages.construction.drawing import Discard, Query, answers_agree
from stages.evaluation.program import AgentProgram, Attempt
from stages.evaluation.runner import run_query
from stages.evaluation.verify_run import write_verify_run
from stages.layout import verify_run_dir
from stages.sandbox import Limits
from stages.scoring.query.attribution import CheckpointError, read_checkpoint
from stages.scoring.query.attribution import matches as checkpoint_matches
from stages.scoring.query.attribution import records as checkpoint_records
from stages.scoring.query.outcomes import Execution, Outcome
from stages.scoring.query.recompute import recompute
from stages.scoring.query.references import read_references
from stages.scoring.query.scorer import GoldError, Grading, other_references, score_query

BOOTSTRAP_FILE = "bootstrap.json"


@dataclass(frozen=True)
class Label:
    """A query's gold, what the annotator reported, and its bootstrap tolerance (if any)."""

    gold: dict
    reported: dict | None = None
    tolerance: float | None = None
    bootstrap_sd: float | None = None
    checkpoints: dict[str, list[dict]] | None = None  # file -> the annotator's rows


class LabelProblem(ValueError):
    """The annotator's hand-in cannot serve as gold; the message says why."""


def annotator_program(private_dir: Path) -> AgentProgram:
    """The annotator script, mounted alone at /agent, run with the project's interpreter."""
    return AgentProgram(argv=[sys.executable, "/agent/reproduce.py"],
                        agent_dir=private_dir / "annotator")


def _failure(attempt: Attempt) -> str | None:
    if attempt.infra_error:
        return f"sandbox failed: {attempt.infra_error}"
    if attempt.timed_out:
        return "annotator script timed out"
    if attempt.exit_code != 0:
        tail = attempt.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        return f"annotator script exited {attempt.exit_code}: {tail[0]}"
    if attempt.answer_text is None:
        return "annotator script wrote no work/answer.json"
    return None


def collected_files(task: TaskSpec) -> tuple[str, ...]:
    """The files of `work/` taken besides answer.json: the artifact, the bootstrap, the checkpoints."""
    names = (task.artifact.file,) if task.artifact is not None else ()
    hypothesis = task.answer.hypothesis
    names += (BOOTSTRAP_FILE,) if hypothesis and hypothesis.bootstrap else ()
    return names + tuple(c.file for c in task.checkpoints)


def _checkpoints(task: TaskSpec, attempt: Attempt) -> dict[str, list[dict]] | None:
    """The annotator's checkpoints as records; every declared one must be written and readable."""
    if not task.checkpoints:
        return None
    out = {}
    for spec in task.checkpoints:
        collected = attempt.files.get(spec.file)
        if collected is None or collected.data is None:
            raise LabelProblem(f"annotator wrote no readable work/{spec.file}")
        try:
            out[spec.file] = checkpoint_records(spec, read_checkpoint(spec, collected.data))
        except CheckpointError as error:
            raise LabelProblem(f"annotator checkpoint: {error}") from error
    return out


def run_annotator(task: TaskSpec, query: Query, task_dir: Path, limits: Limits,
                  hidden: list[Path], warm: tuple[str, ...] | None = None) -> Attempt:
    """Run the task's annotator script on one query in a fresh sandboxed workspace.

    `warm` (the modules to preload; see `stages.sandbox.warm`) runs it as a child of a warm
    interpreter in this worker's warm sandbox instead of starting a sandbox and Python for it.
    """
    program = replace(annotator_program(task_dir / "private"), warm=warm)
    return run_query(query.prompt, task_dir / "public" / query.query_id, program, limits, hidden,
                     collect=collected_files(task))


def _graded_gold(task: TaskSpec, attempt: Attempt, private: Path, key: str) -> dict:
    artifact = attempt.files.get(task.artifact.file)
    data = artifact.data if artifact is not None else None
    problem = None if artifact is None or artifact.missing else artifact.problem
    execution = Execution(attempt.exit_code, attempt.timed_out, attempt.infra_error,
                          attempt.answer_text, attempt.answer_problem)
    result = recompute(task, execution, data, problem, pd.read_parquet(private / "truth.parquet"),
                       pd.read_parquet(private / "required.parquet"), key)
    if result.grades is None:
        raise LabelProblem(f"annotator artifact cannot be graded: {result.artifact_problem}")
    undefined = sorted(result.grades.undefined.items())
    if undefined:
        raise LabelProblem(f"gold metric {undefined[0][0]} is undefined: {undefined[0][1]}")
    return {"metrics": {name: round(value, 6) for name, value in result.grades.values.items()}}


def _bootstrap(task: TaskSpec, attempt: Attempt, gold: float) -> tuple[float, float]:
    spec, hypothesis = task.answer.hypothesis.bootstrap, task.answer.hypothesis
    collected = attempt.files.get(BOOTSTRAP_FILE)
    try:
        values = np.asarray(json.loads(collected.data)["values"], dtype=float)
    except (AttributeError, TypeError, KeyError, ValueError) as error:
        raise LabelProblem(f"annotator wrote no readable work/{BOOTSTRAP_FILE}: {error}") from error
    values = values[np.isfinite(values)]
    if len(values) < 20:
        raise LabelProblem(f"bootstrap has {len(values)} finite replicates, at least 20 are needed")
    sd = float(np.std(values, ddof=1))
    same_sign = float(np.mean(np.sign(values) == np.sign(gold)))
    if sd > spec.max_relative_sd * abs(gold):
        raise LabelProblem(f"gold {gold:.4g} is unstable: bootstrap sd {sd:.3g} exceeds "
                           f"{spec.max_relative_sd} x |gold|")
    if same_sign < spec.min_sign_share:
        raise LabelProblem(f"gold {gold:.4g} is unstable: only {same_sign:.0%} of bootstrap "
                           f"replicates share its sign (at least {spec.min_sign_share:.0%} needed)")
    return max(hypothesis.abs_tol, spec.tolerance_sd * sd), sd


def measure(task: TaskSpec, query: Query, task_dir: Path, attempt: Attempt, key: str) -> Label:
    """Turn one annotator run into a label, or raise `LabelProblem` with the reason."""
    problem = _failure(attempt)
    if problem is not None:
        raise LabelProblem(problem)
    try:
        reported = json.loads(attempt.answer_text)
    except json.JSONDecodeError as error:
        raise LabelProblem(f"annotator answer is not JSON: {error}") from error
    checkpoints = _checkpoints(task, attempt)
    if task.artifact is not None:
        gold = _graded_gold(task, attempt, task_dir / "private" / query.query_id, key)
        return Label(gold, reported, checkpoints=checkpoints)
    hypothesis = task.answer.hypothesis
    if hypothesis is not None and hypothesis.bootstrap is not None:
        answer = reported.get("answer") if isinstance(reported, dict) else None
        if not isinstance(answer, int | float) or isinstance(answer, bool):
            raise LabelProblem(f"annotator answer {answer!r} is not a number")
        tolerance, sd = _bootstrap(task, attempt, float(answer))
        return Label(reported, None, round(tolerance, 9), round(sd, 9), checkpoints)
    return Label(reported, checkpoints=checkpoints)


def _checkpoints_differ(task: TaskSpec, label: Label, again: Label) -> str | None:
    """The first checkpoint the re-run did not reproduce, named, or None."""
    for spec in task.checkpoints:
        frame = pd.DataFrame(again.checkpoints[spec.file], columns=spec.key + spec.columns)
        if not checkpoint_matches(spec, frame, label.checkpoints[spec.file]):
            return f"re-run does not reproduce checkpoint work/{spec.file}"
    return None


def query_grading(task_dir: Path, query_id: str, label: Label) -> Grading:
    """The query's build-time measurements as the scorer uses them."""
    return Grading(read_references(task_dir / "private" / query_id), label.tolerance)


def label_query(task: TaskSpec, query: Query, task_dir: Path, limits: Limits, hidden: list[Path],
                key: str, warm: tuple[str, ...] | None = None) -> tuple[Label | None, Discard | None]:
    """Produce the gold of one query, or the reason it has none (`warm`: see `run_annotator`)."""
    attempt = run_annotator(task, query, task_dir, limits, hidden, warm)
    try:
        return measure(task, query, task_dir, attempt, key), None
    except LabelProblem as error:
        return None, Discard(query.task_id, query.scope, "label", str(error), query.query_id)


def _missed_targets(task: TaskSpec, label: Label, grading: Grading) -> str:
    parts = []
    for metric in task.answer.metrics or []:
        value = label.gold["metrics"].get(metric.name)
        refs = ", ".join(f"{name} {grading.references.get(name, {}).get(metric.name)}"
                         for name in metric.references)
        others = ", ".join(f"{name} {grading.references[name][metric.name]}"
                           for name in other_references(metric, grading))
        parts.append(f"{metric.name} {value} (target {metric.target!r}"
                     + (f"; beat {refs} by {metric.margin}" if refs else "")
                     + (f"; and {others}" if refs and others else "") + ")")
    return "; ".join(parts)


def gold_problem(task: TaskSpec, label: Label, grading: Grading) -> str | None:
    """Why a gold answer cannot stand (unparseable, unrealistic, misses its own targets), or None."""
    try:
        score = score_query(task.answer, Execution(0, False, None, json.dumps(label.gold)),
                            label.gold, grading)
    except GoldError as error:
        return f"gold answer is malformed: {error}"
    if score.outcome != Outcome.ANSWERED:
        return f"gold answer is {score.outcome.value}"
    if not all(score.metric_passes.values()):
        if task.answer.metrics is None:
            return "gold does not match itself"
        return f"gold misses the task's own targets: {_missed_targets(task, label, grading)}"
    return None


def verify_query(task: TaskSpec, query: Query, label: Label, task_dir: Path, limits: Limits,
                 hidden: list[Path], rel_tol: float, key: str,
                 warm: tuple[str, ...] | None = None) -> Discard | None:
    """Re-run the annotator in a fresh sandbox; return the reason to discard the query, or None.

    Warm or cold (`run_annotator`), the re-run is a separate process in a fresh workspace. A kept
    query's re-run is written to its verify-run folder (`stages.evaluation.verify_run`): the
    oracle agent is graded on it instead of running the same script on the same files again.
    """
    problem = gold_problem(task, label, query_grading(task_dir, query.query_id, label))
    if problem is None:
        attempt = run_annotator(task, query, task_dir, limits, hidden, warm)
        try:
            again = measure(task, query, task_dir, attempt, key)
            if not answers_agree(label.gold, again.gold, rel_tol):
                problem = f"re-run does not reproduce the gold within rel_tol={rel_tol}"
            elif task.checkpoints:
                problem = _checkpoints_differ(task, label, again)
        except LabelProblem as error:
            problem = f"re-run: {error}"
    if problem is None:
        write_verify_run(verify_run_dir(task_dir / "private", query.query_id), attempt)
        return None
    return Discard(query.task_id, query.scope, "verify", problem, query.query_id)
