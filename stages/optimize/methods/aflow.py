"""`aflow`: a tree of workflows grown by one change at a time, each parent drawn by its val reward.

In the spirit of AFlow (Zhang et al., "AFlow: Automating Agentic Workflow Generation", ICLR 2025,
arXiv:2410.10762), over workflow documents instead of Python code: every round draws a parent from
the best `TOP_K` workflows scored so far (the start always among them) with AFlow's mixed
probability, lambda/n + (1 - lambda) softmax(alpha (100 s - max)), with alpha 0.2 and lambda 0.3 as
in its reference implementation; the designer is shown the parent and what earlier changes to it
did (AFlow's tree-structured experience) and asked for one change; the child is scored on val once
(one validation round). The best workflow scored is kept, the start on a tie. ST-Bench's budget
(its Table 3): 2 rounds, 2 candidates sampled from, 1 validation round.
"""

from __future__ import annotations

import numpy as np

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.candidates import document
from stages.optimize.search import Search, outline

START = "one_turn"
TOP_K = 2
ALPHA, LAMBDA = 0.2, 0.3
ASK = ("Change this workflow in one way (add, remove or change one node, or what a node sees) that you expect"
       " to raise its reward. What earlier changes to it did:\n{experience}")


def aflow(search: Search) -> Workflow:
    """Grow the tree for the budget's rounds; the best workflow scored."""
    start = search.start_or(START)
    scored = {document(start)[1]: (start, search.score(start))}
    for round_number in range(1, search.budget.rounds + 1):
        if search.designer is None:
            break
        parent, reward = select(list(scored.values()), start, search.rng)
        digest = document(parent)[1]
        child = search.designer.propose(f"round {round_number}", search.task, parent, reward,
                                        ASK.format(experience=search.experience(parent=digest)))
        if child is None:
            continue
        scored.setdefault(document(child)[1], (child, search.score(child, parent=parent, round_number=round_number)))
    return best(scored.values())


def best(scored) -> Workflow:
    """The highest reward, the earliest scored on a tie (the start first)."""
    found, top = None, -1.0
    for workflow, reward in scored:
        if reward > top:
            found, top = workflow, reward
    return found


def select(scored: list[tuple[Workflow, float]], start: Workflow, rng: np.random.Generator
           ) -> tuple[Workflow, float]:
    """A parent drawn from the best TOP_K (and the start) by AFlow's mixed probability."""
    ranked = sorted(scored, key=lambda pair: (-pair[1], outline(pair[0])))
    pool = ranked[:TOP_K] + [pair for pair in ranked[TOP_K:] if pair[0] == start]
    return pool[rng.choice(len(pool), p=mixed_probability([reward for _, reward in pool]))]


def mixed_probability(rewards: list[float]) -> np.ndarray:
    """Lambda uniform + (1 - lambda) softmax of alpha x (100 x reward - the best)."""
    scores = 100 * np.asarray(rewards, dtype=float)
    weights = np.exp(ALPHA * (scores - scores.max()))
    return LAMBDA / len(scores) + (1 - LAMBDA) * weights / weights.sum()
