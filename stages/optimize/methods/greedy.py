"""Greedy refinement, shared by `oneshot` and `w4s`: the designer improves the best workflow so far, round by round."""

from __future__ import annotations

from collections.abc import Callable

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.search import Search


def refine(search: Search, start: Workflow, step: str, ask: Callable[[], str]) -> Workflow:
    """Score the start; each round ask for an improvement of the best (`ask()` says how) and keep it when
    it scores higher. The best scored, the start on a tie; the start alone without a designer.
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
