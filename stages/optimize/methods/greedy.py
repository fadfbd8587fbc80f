"""Greedy refinement, shared by `oneshot` and `w4s`: the designer improves the best workflow so far, round by round."""

from __future__ import annotations

from collections.abc import Callable

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.search import Search


def refine(search: Search, start: Workflow, step: str, ask: Callable[[], str]) -> Workflow:
    """The best workflow scored: the start, or an improvement that scored higher.

    Each round asks the designer for an improvement of the best so far (`ask()` says how) and keeps
    it when it scores higher: the start on a tie, the start alone without a designer.
    """
    best, best_reward = start, search.score(start)
    for round_number in range(1, search.budget.rounds + 1):
        if search.designer is None:
            break
        proposal = search.designer.propose(f"{step} {round_number}", search.task, best, best_reward, ask())
        if proposal is None:
            continue
        reward = search.score(proposal, parent=best, round_number=round_number)
        if reward > best_reward:
            best, best_reward = proposal, reward
    return best
