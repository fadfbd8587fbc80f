"""One optimisation: a method's candidates scored on the pools, everything it spent kept in its log.

A method gets a `Search`: the start workflow, the task as a train query shows it, the designer
(the optimiser's model), the budget and a seeded random generator, and scores candidates with
`score(workflow, parent)`, which runs them on the budget's val queries through the `Evaluator`
and logs a `Step`. The log holds every candidate, its parent, its rewards per query, and the tokens
and seconds its runs spent; the designer's own calls are counted apart (`Designer.asker.usage`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.candidates import Evaluator, document
from stages.optimize.designer import Designer


@dataclass(frozen=True)
class Budget:
    """What a method may spend: rounds of proposals, val queries a candidate is scored on."""

    rounds: int = 1
    val_queries: int = 2


@dataclass(frozen=True)
class Step:
    """One candidate scored."""

    round: int
    workflow: str  # content hash of the document (the evaluator keeps it under workflows/)
    parent: str | None
    rewards: dict[str, float]
    mean: float
    tokens: int
    seconds: float
    reused: int


@dataclass
class Search:
    """What a method works with, and what it did."""

    evaluator: Evaluator
    task: str  # a train query's prompt: the task as the agent is shown it
    train: list[str]
    val: list[str]
    designer: Designer | None
    budget: Budget = Budget()
    seed: int = 0
    log: list[Step] = field(default_factory=list)

    def __post_init__(self):
        self.rng = np.random.default_rng(self.seed)
        self.scored_on = sorted(self.val)[: self.budget.val_queries]

    def score(self, workflow: Workflow, parent: Workflow | None = None, round_number: int = 0) -> float:
        """The candidate's mean reward on the scoring val queries (logged)."""
        evaluation = self.evaluator.evaluate(workflow, self.scored_on)
        self.log.append(Step(round_number, evaluation.workflow, document(parent)[1] if parent else None,
                             evaluation.rewards, round(evaluation.mean, 6), evaluation.tokens, evaluation.seconds,
                             evaluation.reused))
        return evaluation.mean

    def write_log(self, path: Path) -> None:
        """The steps as JSON lines, then the designer's calls beside them."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(asdict(step), sort_keys=True) + "\n" for step in self.log))
        if self.designer is not None:
            self.designer.asker.write_log(path.with_name(path.stem + ".designer.jsonl"))
