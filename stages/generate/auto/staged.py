"""A loop task as an agent gets it, and how what the agent hands in is graded.

The task is staged like a catalog query: `prompt.md` (the question, the notes the hiding strategies
state, where the data is, and the catalog's answer-format block for a hypothesis answer) and one
public file, `data/table.csv`, the artefacted table. The answer is `work/answer.json` as
`{"answer": <number>}` (or a category, for a question that names a variable or a level), parsed
and graded by the catalog's own hypothesis path: the realistic filter, then MoSciBench exact match
with the template's relative tolerance. The gold never reaches the staged files.
"""

from __future__ import annotations

from pathlib import Path

from stages.catalog import AnswerSpec, HypothesisSpec
from stages.construction.prompts import render_answer_block
from stages.generate.auto.loop import Task
from stages.scoring.query.checks import hypothesis_matches
from stages.scoring.query.outcomes import is_realistic, parse_answer

DATA_FILE = "table.csv"


def answer_spec(task: Task) -> AnswerSpec:
    """The public answer spec: the format, the question as description, the tolerance; never the gold."""
    if isinstance(task.gold, str):
        choices = sorted(set(task.context.numeric_columns()) | set(task.context.levels()))
        return AnswerSpec(hypothesis=HypothesisSpec(format="category", description=task.question,
                                                    categories=choices, rel_tol=0.0))
    return AnswerSpec(hypothesis=HypothesisSpec(format="number", description=task.question, rel_tol=task.tolerance))


def prompt(task: Task) -> str:
    """What `prompt.md` says."""
    notes = "".join(f"{note}\n\n" for note in task.notes)
    return (f"# A data analysis question\n\n{task.question}\n\n{notes}"
            f"The data: `data/{DATA_FILE}`, one row per record, identified by `sample_id`.\n\n"
            f"{render_answer_block(answer_spec(task))}")


def stage(task: Task, public_dir: Path) -> None:
    """Write the task's public data (the artefacted table as CSV) into `public_dir`."""
    public_dir.mkdir(parents=True, exist_ok=True)
    task.table.to_csv(public_dir / DATA_FILE, index=False)


def handed_in(task: Task, text: str | None) -> float | str | None:
    """The value an agent's `answer.json` gives, or None when it is missing, malformed or unrealistic."""
    if text is None:
        return None
    spec = answer_spec(task)
    parsed = parse_answer(spec, text)
    if parsed is None or not is_realistic(spec, parsed):
        return None
    return parsed["answer"]


def graded(task: Task, text: str | None) -> bool:
    """Whether an agent's `answer.json` text answers the task (exact match within the tolerance)."""
    value = handed_in(task, text)
    return value is not None and hypothesis_matches(answer_spec(task).hypothesis, value, task.gold)
