"""The optimisation methods, by name: each takes a `Search` and returns the workflow it found.

- `oneshot`: one design from the task description, kept if it beats the start on val (a single
  round, in the spirit of MetaAgent: Zhang, Liu and Xiao, "MetaAgent: Automatically Constructing
  Multi-Agent Systems Based on Finite State Machines", ICML 2025; not its state-machine form).
"""

from __future__ import annotations

from collections.abc import Callable

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.methods.oneshot import oneshot
from stages.optimize.search import Search

METHODS: dict[str, Callable[[Search], Workflow]] = {"oneshot": oneshot}

__all__ = ["METHODS"]
