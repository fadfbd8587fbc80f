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

from stages.evaluation.agents.llm.workflows import Workflow, builtin_workflow
from stages.optimize.candidates import Evaluator, document
from stages.optimize.designer import Designer
from stages.params import MethodBudget

Budget = MethodBudget  # what a method may spend: rounds of proposals, val queries a candidate is scored on


@dataclass(frozen=True)
class Step:
    """One candidate scored."""

    round: int
    workflow: str  # content hash of the document (the evaluator keeps it under workflows/)
    parent: str | None
    rewards: dict[str, float]
    mean: float
    reported: float  # the mean reward its hand-ins' own numbers would earn (never climbed: the audit's)
    feedback: dict[str, str]  # what became of each run (candidates.run_feedback)
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
    budget: Budget = field(default_factory=Budget)
    seed: int = 0
    start: Workflow | None = None  # where the method starts (None: the method's own default)
    log: list[Step] = field(default_factory=list)

    def __post_init__(self):
        self.rng = np.random.default_rng(self.seed)
        # the val queries every candidate is scored on: a seeded draw (a category's pool spans tasks),
        # from a generator of its own so that the methods' draws do not depend on it
        drawn = np.random.default_rng([self.seed, 1]).permutation(sorted(self.val))[: self.budget.val_queries]
        self.scored_on = sorted(str(query_id) for query_id in drawn)
        self.seen: dict[str, Workflow] = {}  # every candidate scored, by its content hash

    def score(self, workflow: Workflow, parent: Workflow | None = None, round_number: int = 0) -> float:
        """The candidate's mean reward on the scoring val queries (logged)."""
        evaluation = self.evaluator.evaluate(workflow, self.scored_on)
        self.seen[evaluation.workflow] = workflow
        self.log.append(Step(round_number, evaluation.workflow, document(parent)[1] if parent else None,
                             evaluation.rewards, round(evaluation.mean, 6), round(evaluation.reported_mean, 6),
                             evaluation.feedback, evaluation.tokens, evaluation.seconds,
                             evaluation.reused))
        return evaluation.mean

    def start_or(self, name: str) -> Workflow:
        """The search's start workflow, or the built-in `name` when none was given."""
        return self.start if self.start is not None else builtin_workflow(name)

    def experience(self, parent: str | None = None) -> str:
        """What the candidates scored so far did (those of `parent` only, when given), for the designer.

        Each candidate's mean reward, its change on the workflow it changed, and per scoring query
        (numbered, not named) its reward and what became of the run: never a truth or a gold.
        """
        scores = {step.workflow: step.mean for step in self.log}
        lines = [f"- round {step.round}: {outline(self.seen[step.workflow])}: mean reward {step.mean:.3f}"
                 + ("" if step.parent not in scores else f" ({step.mean - scores[step.parent]:+.3f} on the"
                                                          f" workflow it changed, {outline(self.seen[step.parent])})")
                 + "".join(f"\n  - query {number}: reward {step.rewards[query]:.3f}, {step.feedback[query]}"
                           for number, query in enumerate(sorted(step.rewards), start=1))
                 for step in self.log if parent is None or step.parent == parent]
        return "\n".join(lines) or "- none yet"

    def audit(self, kept: Workflow) -> dict:
        """Did the search ever prefer a candidate whose hand-ins report more reward than they earn?

        Preferred: the workflow kept, and every candidate that beat the one it changed. A candidate
        is inflated when the reward of its hand-ins' own numbers exceeds the recomputed one.
        """
        means = {step.workflow: step.mean for step in self.log}
        preferred = {step.workflow for step in self.log
                     if step.workflow == document(kept)[1] or (step.parent in means and step.mean > means[step.parent])}
        inflated = {step.workflow for step in self.log if step.reported > step.mean + 1e-9}
        return {"preferred": sorted(preferred), "inflated": sorted(inflated),
                "inflated_preferred": sorted(preferred & inflated)}

    def write_log(self, path: Path) -> None:
        """The steps as JSON lines, then the designer's calls beside them."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(asdict(step), sort_keys=True) + "\n" for step in self.log))
        if self.designer is not None:
            self.designer.asker.write_log(path.with_name(path.stem + ".designer.jsonl"))


def outline(workflow: Workflow) -> str:
    """A one-line sketch of a workflow: its name and nodes, each with its operator and inputs."""
    nodes = ", ".join(f"{node.id}({node.op}{' <- ' + '+'.join(node.inputs) if node.inputs else ''})"
                      for node in workflow.nodes)
    return f"{workflow.name} [{nodes}]"
