"""`oneshot`: the designer writes one workflow for the task; it is kept if it beats the start on val."""

from __future__ import annotations

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.search import Search

START = "one_turn"
ASK = ("Design the workflow for this task that you expect to score highest: which steps, which roles, what each"
       " sees of the earlier ones.")


def oneshot(search: Search) -> Workflow:
    """Score the start, ask for one design, score it; the better of the two (the start on a tie)."""
    start = search.start_or(START)
    best, best_reward = start, search.score(start)
    if search.designer is None:
        return best
    for round_number in range(1, search.budget.rounds + 1):
        proposal = search.designer.propose(f"design {round_number}", search.task, best, best_reward, ASK)
        if proposal is None:
            continue
        reward = search.score(proposal, parent=best, round_number=round_number)
        if reward > best_reward:
            best, best_reward = proposal, reward
    return best
