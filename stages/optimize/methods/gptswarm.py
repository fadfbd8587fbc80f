"""`gptswarm`: which node sees which, learned by a policy gradient over the edges of a fixed team.

In the spirit of GPTSwarm's edge optimisation (Zhuge et al., "GPTSwarm: Language Agents as
Optimizable Graphs", ICML 2024, PMLR 235:62743-62767): the start is a composite graph (by default
the four-role team), every forward pair of its nodes a potential edge (a later node seeing an
earlier one's note) kept with probability sigmoid(theta), theta 0 at first. Each realisation is
sampled, scored on val, and theta takes one REINFORCE step with the mean reward as baseline:
theta += lr * mean((r - mean r) (x - sigmoid(theta))). The nodes and their prompts stay as they are
(GPTSwarm's node optimisation is not done here), and no designer is asked. The kept workflow is the
best realisation scored, a tie broken by its likelihood under the updated theta: with ST-Bench's
budget (its Table 3: 3 realisations x 2 val queries) one gradient step is too noisy to hand in the
most likely graph unscored.
"""

from __future__ import annotations

import numpy as np

from stages.evaluation.agents.llm.workflows import Workflow
from stages.optimize.search import Search

START = "workflow"
LEARNING_RATE = 1.0


def gptswarm(search: Search) -> Workflow:
    """Sample, score and update for the budget's rounds (realisations); the best realisation."""
    composite = search.start_or(START)
    edges = potential_edges(composite)
    theta = np.zeros(len(edges))
    masks = [search.rng.random(len(edges)) < sigmoid(theta) for _ in range(search.budget.rounds)]
    scored = [(mask, search.score(realise(composite, edges, mask), parent=composite, round_number=number))
              for number, mask in enumerate(masks, start=1)]
    theta = reinforce(theta, [mask for mask, _ in scored], [reward for _, reward in scored])
    probability = sigmoid(theta)
    likelihood = [float(np.prod(np.where(mask, probability, 1 - probability))) for mask, _ in scored]
    best = max(range(len(scored)), key=lambda index: (scored[index][1], likelihood[index], -index))
    return realise(composite, edges, scored[best][0])


def reinforce(theta: np.ndarray, masks: list, rewards: list[float]) -> np.ndarray:
    """One REINFORCE step on the edge logits, the mean reward as baseline (d log p / d theta = x - p)."""
    taken, rewards = np.array(masks, dtype=float), np.array(rewards)
    return theta + LEARNING_RATE * ((rewards - rewards.mean())[:, None] * (taken - sigmoid(theta))).mean(axis=0)


def potential_edges(workflow: Workflow) -> list[tuple[str, str]]:
    """Every (earlier, later) pair of nodes: the edges a realisation may keep."""
    ids = [node.id for node in workflow.nodes]
    return [(source, target) for index, target in enumerate(ids) for source in ids[:index]]


def realise(workflow: Workflow, edges: list[tuple[str, str]], mask) -> Workflow:
    """The workflow whose nodes see exactly the kept edges' sources (named after the edges kept)."""
    kept = {edge for edge, keep in zip(edges, mask, strict=True) if keep}
    nodes = [node.model_copy(update={"inputs": [source for source, target in edges
                                                if target == node.id and (source, target) in kept]})
             for node in workflow.nodes]
    code = "".join("1" if keep else "0" for keep in mask)
    return Workflow(name=f"{workflow.name}_edges_{code}", description=workflow.description, nodes=nodes)


def sigmoid(theta: np.ndarray) -> np.ndarray:
    """The probability of each edge."""
    return 1 / (1 + np.exp(-theta))
