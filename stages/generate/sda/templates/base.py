"""What a question template is: typed placeholders, a binder, a derivation and its perturbations.

A template's `bind` draws a valid assignment of its placeholders on one dataset (or None when the
dataset offers none); `derive` replays the requested analysis on the dataset's table (and, for
causal templates, on the hidden generator) and returns the answer. The MCQ distractors come from
deriving again under perturbed assignments: `diffusion` swaps roles or values between variables,
`confusion` changes one local element (a statistic, a threshold, an operator); a new random
assignment and a numeric transform of the answer are generic and live in `instances`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd

from stages.generate.sda.dataset import Simulation, simulate
from stages.generate.sda.scenario import Scenario

TASK_TYPES = ("descriptive", "inferential", "causal", "mechanistic", "exploratory", "predictive")
Binding = dict[str, str | float]
R = TypeVar("R")


@dataclass(frozen=True)
class Context:
    """One generated dataset: its scenario, table and (hidden) generator."""

    scenario: Scenario
    simulation: Simulation
    replays: dict = field(default_factory=dict, compare=False, repr=False)
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def remembered(self, key: tuple, compute: Callable[[], R]) -> R:
        """`compute()`, computed once for this dataset and `key` (an exception is raised again, not kept)."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    @property
    def table(self) -> pd.DataFrame:
        """The observed table, as an agent sees it."""
        return self.simulation.table

    def measured(self, roles: tuple[str, ...] = ("source", "internal", "target")) -> list[str]:
        """Names of the scenario's variables with these roles, in declaration order."""
        return [v.name for v in self.scenario.variables if v.role in roles]

    def numeric_columns(self) -> list[str]:
        """Every numeric column of the table (variables and distractors), sorted."""
        return sorted([*self.measured(), *(d.name for d in self.scenario.distractors)])

    def levels(self) -> tuple[str, ...]:
        """The group factor's levels."""
        return self.scenario.groups[self.scenario.group]

    def intervened(self, do: dict[str, float]) -> Simulation:
        """The same dataset replayed with variables set to constants (same exogenous noise); cached."""
        key = tuple(sorted(do.items()))
        if key not in self.replays:
            hidden = self.simulation.hidden
            observational = self.simulation if self.simulation.true else None
            self.replays[key] = simulate(self.scenario, hidden["n_rows"], hidden["seed"], do, observational)
        return self.replays[key]


@dataclass(frozen=True)
class Template:
    """A typed question template with its derivation and perturbations."""

    id: str
    task_type: Literal[TASK_TYPES]
    text: str
    answer: Literal["number", "entity"]
    bind: Callable[[Context, np.random.Generator], Binding | None]
    derive: Callable[[Context, Binding], float | str]
    diffusion: Callable[[Context, Binding], list[Binding]] = field(default=lambda context, binding: [])
    confusion: Callable[[Context, Binding], list[Binding]] = field(default=lambda context, binding: [])
    tolerance: float = 0.02  # relative, for numeric answers

    def bound(self, context: Context, rng: np.random.Generator) -> Binding | None:
        """A binding (as `bind`) whose numbers are the values the question shows, so text and answer agree.

        A threshold drawn as 22.081 is shown as 22.08; an agent filters on 22.08, so must the gold.
        """
        binding = self.bind(context, rng)
        if binding is None:
            return None
        return {key: value if isinstance(value, str) else float(_shown(value)) for key, value in binding.items()}

    def question(self, context: Context, binding: Binding) -> str:
        """The question text with every placeholder filled (units and levels spelled out)."""
        values = {key: _shown(value) for key, value in binding.items()}
        for key, value in binding.items():
            if isinstance(value, str) and value in {v.name for v in context.scenario.variables}:
                values[f"{key}_unit"] = context.scenario.variable(value).unit
        values["group"] = context.scenario.group
        return self.text.format(**values)


def per_dataset(function: Callable[..., R]) -> Callable[..., R]:
    """`function(context, *arguments)` computed once per context and arguments.

    For pure functions of the dataset: binders draw again on every attempt and every randomization
    distractor, so what they choose from and the statistics they screen with repeat. Arguments are
    compared by `memo_key` (a binding by its items, 1 and 1.0 apart). The value returned is shared:
    callers never modify it.
    """
    @functools.wraps(function)
    def remembered(context: Context, *arguments: Any) -> R:
        key = (function.__module__, function.__qualname__, *map(memo_key, arguments))
        return context.remembered(key, lambda: function(context, *arguments))

    return remembered


@per_dataset
def quantile(context: Context, name: str, q: float) -> float:
    """`context.table[name].quantile(q)`: binders draw thresholds at a few quantiles, again and again."""
    return context.table[name].quantile(q)


@per_dataset
def level_rows(context: Context, level: str) -> pd.DataFrame:
    """The table's rows whose group factor is `level`, in table order."""
    table = context.table
    return table[table[context.scenario.group] == level]


def memo_key(value: Any) -> Any:
    """A hashable stand-in for an argument: a dict by its sorted items, a list by its items, each by type and repr."""
    if isinstance(value, dict):
        return tuple(sorted((key, memo_key(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return tuple(memo_key(item) for item in value)
    return type(value).__name__, repr(value)


def line_fit(x, y, degree: int = 1, **options):
    """`np.polyfit`, refused (ValueError: the analysis has no result) on a non-finite value.

    LAPACK would print its complaint about a NaN (a log of a coded or negative value) to stdout.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("a fit on non-finite values")
    return np.polyfit(x, y, degree, **options)


def pick(rng: np.random.Generator, items: list | tuple, count: int = 1) -> list:
    """`count` distinct items drawn without replacement, in draw order."""
    return [items[i] for i in rng.choice(len(items), size=count, replace=False)]


def one_variable(context: Context, rng: np.random.Generator) -> Binding:
    """A binder of one measured variable, drawn."""
    return {"variable": pick(rng, context.measured())[0]}


def swapped(binding: Binding, first: str, second: str) -> Binding:
    """The binding with two placeholders' values exchanged."""
    return binding | {first: binding[second], second: binding[first]}


def _shown(value: str | float) -> str:
    return value if isinstance(value, str) else f"{value:.4g}"
