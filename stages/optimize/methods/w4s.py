"""`w4s`: a meta-agent refines one workflow over a few iterations, shown every earlier attempt.

In the spirit of W4S (Nie et al., "Weak-for-Strong: Training Weak Meta-Agent to Harness Strong
Executors", COLM 2025, arXiv:2504.04785): each iteration the meta-agent (here the designer, prompted;
W4S trains it with reinforcement learning, which is not done here) sees the current workflow, its
val reward and the history of the attempts with their rewards, and writes an improved workflow,
which is scored on val; the best so far is the next one refined. ST-Bench's budget (its Table 3):
3 iterations x 2 val queries.
"""

from __future__ import annotations

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.methods.greedy import refine
from stages.optimize.search import Search

START = "one_turn"
ASK = ("Improve this workflow so that it scores higher. Every attempt so far and its mean reward on val:\n"
       "{experience}\nWrite the improved workflow.")


def w4s(search: Search) -> Workflow:
    """Refine the best workflow for the budget's rounds, shown every attempt; the best scored (the start on a tie)."""
    return refine(search, search.start_or(START), "iteration", lambda: ASK.format(experience=search.experience()))
