"""`autoagents`: no workflow is learned; each query gets its own team, written when it runs.

A query-level method in the spirit of AutoAgents (Chen et al., "AutoAgents: A Framework for
Automatic Agent Generation", IJCAI 2024, arXiv:2309.17288): the learned system is the built-in
`explorer` workflow, whose `compose` node has the model write a workflow for the query in front of
it (its drafting stage, in one call; AutoAgents' observers are not run), which then runs. The
search scores it on val once (one round), so its cost and reward sit in the log beside the other
methods'. ST-Bench capped the explorer at 3 test queries (its Table 3), which cost it coverage; no
cap here: every test query gets its team.
"""

from __future__ import annotations

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.search import Search

START = "explorer"


def autoagents(search: Search) -> Workflow:
    """The explorer, scored on val."""
    explorer = search.start_or(START)
    search.score(explorer)
    return explorer
