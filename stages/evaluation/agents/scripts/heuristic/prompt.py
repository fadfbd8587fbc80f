"""Read a rendered prompt: its JSON blocks, the identifiers it names, and the method it calls for.

The prompt of a query has a free-text objective, a `## Scope` block (entity key, entities, period),
an `## Answer format` block (named metrics or a typed hypothesis) and, for a graded task, an
`## Artifact` block (file, key columns, typed value columns with descriptions, and which rows are
owed). The method family follows from those blocks alone:

| artifact rows                  | value columns | family      | standard method                         |
|--------------------------------|---------------|-------------|-----------------------------------------|
| `holdout` (a later period)     | float         | `forecast`  | regression on lagged / seasonal drivers |
| `hidden_gaps` (null days)      | float         | `impute`    | pseudo-gap regression on neighbours     |
| `held_out_entities` (unseen)   | float         | `transfer`  | regression pooled over the other entities |
| `entities` (one per entity)    | int           | `partition` | k-means on standardised signatures      |
| no artifact, hypothesis answer | -             | `statistic` | regression / correlation / trend test   |

Each value column also gets a learner from its description (a column described as a linear
regression model is fitted by least squares, a random forest by a random forest, anything else by
gradient-boosted trees), so that a model-comparison task gets the models it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from prompt_blocks import find_block

IDENTIFIER = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")
RUN_LENGTHS = re.compile(r"runs of (\d+) to (\d+) (?:consecutive )?\w* ?days", re.IGNORECASE)
FAMILIES = {"holdout": "forecast", "hidden_gaps": "impute", "entities": "partition",
            "held_out_entities": "transfer"}
# Learner keywords, most specific first: the first one found in a column's description wins.
LEARNERS = (
    ("random forest", "forest"),
    ("forest", "forest"),
    ("linear regression", "linear"),
    ("least squares", "linear"),
    ("linear", "linear"),
    ("ridge", "linear"),
    ("boost", "boosting"),
)


@dataclass(frozen=True)
class Prompt:
    """What the prompt declares: its text and its scope, answer and artifact blocks."""

    text: str
    scope: dict
    answer: dict
    artifact: dict | None

    @property
    def key(self) -> str:
        """The entity key column."""
        return self.scope["entity_key"]

    @property
    def identifiers(self) -> list[str]:
        """Every identifier the prompt writes in backticks, in order of first appearance."""
        return list(dict.fromkeys(IDENTIFIER.findall(self.text)))


@dataclass(frozen=True)
class Plan:
    """The method chosen for a prompt: a family and one learner per artifact value column."""

    family: str
    learners: dict[str, str] = field(default_factory=dict)
    run_days: tuple[int, int] = (5, 30)


def parse_prompt(text: str) -> Prompt:
    """Parse a rendered prompt.

    Raises:
        ValueError: If the scope or the answer-format block is missing.
    """
    scope, answer = find_block(text, "Scope"), find_block(text, "Answer format")
    if scope is None or answer is None:
        raise ValueError("prompt lacks a '## Scope' or '## Answer format' block")
    return Prompt(text, scope, answer, find_block(text, "Artifact"))


def learner_for(description: str) -> str:
    """The learner a value column's description names (`boosting` when it names none)."""
    lowered = description.lower()
    return next((learner for word, learner in LEARNERS if word in lowered), "boosting")


def run_lengths(text: str, default: tuple[int, int] = (5, 30)) -> tuple[int, int]:
    """The lengths of hidden runs of days the prompt announces (`runs of 5 to 30 ... days`)."""
    match = RUN_LENGTHS.search(text)
    return (int(match.group(1)), int(match.group(2))) if match else default


def choose_plan(prompt: Prompt) -> Plan:
    """The method family and learners for a prompt (see the module docstring)."""
    artifact = prompt.artifact
    if artifact is None:
        return Plan("statistic" if prompt.answer["kind"] == "hypothesis" else "none")
    rows = artifact["rows"]["kind"]
    dtypes = set(artifact["columns"].values())
    family = FAMILIES.get(rows, "none")
    if family == "partition" and dtypes != {"int"}:
        family = "none"
    descriptions = artifact.get("descriptions") or {}
    learners = {column: learner_for(descriptions.get(column, "")) for column in artifact["columns"]}
    return Plan(family, learners, run_lengths(prompt.text))
