"""`oneshot`: the designer writes one workflow for the task; it is kept if it beats the start on val."""

from __future__ import annotations

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.methods.greedy import refine
from stages.optimize.search import Search

START = "one_turn"
ASK = ("Design the workflow for this task that you expect to score highest: which steps, which roles, what each"
       " sees of the earlier ones.")


def oneshot(search: Search) -> Workflow:
    """Score the start, ask for one design, score it; the better of the two (the start on a tie)."""
    return refine(search, search.start_or(START), "design", lambda: ASK)
