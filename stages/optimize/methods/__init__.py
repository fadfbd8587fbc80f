"""The optimisation methods, by name: each takes a `Search` and returns the workflow it found.

Task-level methods learn one workflow per task (or category) and reuse it on every query of it;
the query-level `autoagents` hands in a workflow that writes a fresh one per query. Each method's
module cites its paper and says where it departs from it; `BUDGETS` are ST-Bench's per-task
budgets (its Table 3), the defaults of params.yaml `optimize.budgets`.

- `oneshot`: one design, kept if it beats the start (MetaAgent, ICML 2025; not its state machines).
- `w4s`: iterative refinement shown every earlier attempt (W4S, COLM 2025; prompted, not trained).
- `aflow`: a tree grown one change at a time, parents drawn by reward (AFlow, ICLR 2025).
- `gptswarm`: a policy gradient over the edges of a fixed team (GPTSwarm, ICML 2024).
- `autoagents`: the explorer, which composes a team per query (AutoAgents, IJCAI 2024).
"""

from __future__ import annotations

from collections.abc import Callable

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.methods.aflow import aflow
from stages.optimize.methods.autoagents import autoagents
from stages.optimize.methods.gptswarm import gptswarm
from stages.optimize.methods.oneshot import oneshot
from stages.optimize.methods.w4s import w4s
from stages.optimize.search import Budget, Search

METHODS: dict[str, Callable[[Search], Workflow]] = {
    "oneshot": oneshot, "w4s": w4s, "aflow": aflow, "gptswarm": gptswarm, "autoagents": autoagents}
BUDGETS = {"oneshot": Budget(rounds=1, val_queries=2), "w4s": Budget(rounds=3, val_queries=2),
           "aflow": Budget(rounds=2, val_queries=2), "gptswarm": Budget(rounds=3, val_queries=2),
           "autoagents": Budget(rounds=1, val_queries=2)}
QUERY_LEVEL = {"autoagents"}

__all__ = ["BUDGETS", "METHODS", "QUERY_LEVEL"]
