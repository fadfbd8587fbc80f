"""Formalize & label, and verify: run the annotator reproduction script like an agent, twice.

The gold answer is what the annotator script wrote at build time; verification re-runs it in a fresh
sandbox and checks that it reproduces within tolerance and that the gold clears the task's targets.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from stages.agents.program import AgentProgram
from stages.catalog import AnswerSpec
from stages.construct import Discard, Query, answers_agree
from stages.runner import Attempt, run_query
from stages.sandbox import Limits
from stages.scoring.outcomes import Execution, Outcome
from stages.scoring.query import GoldError, score_query


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


def run_annotator(query: Query, task_dir: Path, limits: Limits, hidden: list[Path]) -> Attempt:
    """Run the task's annotator script on one query in a fresh sandboxed workspace."""
    return run_query(query.prompt, task_dir / "public", annotator_program(task_dir / "private"),
                     limits, hidden)


def label_query(
    query: Query, task_dir: Path, limits: Limits, hidden: list[Path]
) -> tuple[dict | None, Discard | None]:
    """Produce the gold answer of one query, or the reason it has none."""
    attempt = run_annotator(query, task_dir, limits, hidden)
    problem = _failure(attempt)
    if problem is None:
        try:
            return json.loads(attempt.answer_text), None
        except json.JSONDecodeError as error:
            problem = f"annotator answer is not JSON: {error}"
    return None, Discard(query.task_id, query.scope, "label", problem, query.query_id)


def gold_problem(answer: AnswerSpec, gold: dict) -> str | None:
    """Why a gold answer cannot stand (unparseable, unrealistic, misses its own targets), or None."""
    try:
        score = score_query(answer, Execution(0, False, None, json.dumps(gold)), gold)
    except GoldError as error:
        return f"gold answer is malformed: {error}"
    if score.outcome != Outcome.ANSWERED:
        return f"gold answer is {score.outcome.value}"
    failed = sorted(name for name, passed in score.metric_passes.items() if not passed)
    if failed:
        return f"gold misses the task's own targets for metrics {failed}"
    return None


def verify_query(
    query: Query,
    gold: dict,
    answer: AnswerSpec,
    task_dir: Path,
    limits: Limits,
    hidden: list[Path],
    rel_tol: float,
) -> Discard | None:
    """Re-run the annotator in a fresh sandbox; return the reason to discard the query, or None."""
    problem = gold_problem(answer, gold)
    if problem is None:
        attempt = run_annotator(query, task_dir, limits, hidden)
        problem = _failure(attempt)
        if problem is None:
            try:
                again = json.loads(attempt.answer_text)
            except json.JSONDecodeError as error:
                again, problem = None, f"re-run answer is not JSON: {error}"
            if problem is None and not answers_agree(gold, again, rel_tol):
                problem = f"re-run does not reproduce the gold within rel_tol={rel_tol}"
    if problem is None:
        return None
    return Discard(query.task_id, query.scope, "verify", problem, query.query_id)
