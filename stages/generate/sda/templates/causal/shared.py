"""What the causal templates share: replays of the hidden generator under interventions, and its graph.

Replays and graphs are kept across contexts of the same scenario (a binder and its derivation
share them); `_slope` is the naive observational answer several distractors use.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from stages.generate.sda.templates.base import Context, line_fit, per_dataset

REPLAYS_KEPT = 512  # replayed tables kept in memory (an entity template replays every candidate)
_REPLAYS: dict[tuple, pd.DataFrame] = {}
_GRAPHS: dict[str, _Graph] = {}


def _rounded(value: float) -> float:
    """`value` at the precision the question shows it (4 significant digits), so both agree."""
    return float(f"{value:.4g}")


@per_dataset
def _scenario_json(context: Context) -> str:
    """The scenario as JSON, which keys the replays and graphs kept across contexts."""
    return context.scenario.model_dump_json()


def _replay(context: Context, do: dict[str, float]) -> pd.DataFrame:
    """The table of `context.intervened(do)`, kept so that a binder and its derivation share replays."""
    hidden = context.simulation.hidden
    key = (_scenario_json(context), hidden["n_rows"], hidden["seed"], tuple(sorted(do.items())))
    if key not in _REPLAYS:
        if len(_REPLAYS) >= REPLAYS_KEPT:
            del _REPLAYS[next(iter(_REPLAYS))]
        _REPLAYS[key] = context.intervened(do).table
    return _REPLAYS[key]


@dataclass(frozen=True)
class _Graph:
    """A scenario's causal structure, as the causal templates query it (computed once per scenario)."""

    effects: list[tuple[str, str]]  # (cause, effect): effect is computed, cause one of its ancestors
    between: dict[tuple[str, str], list[str]]  # variables on at least one path from cause to effect
    dominators: dict[tuple[str, str], list[str]]  # variables on every path from cause to effect
    partial: list[tuple[str, str, str]]  # (cause, mediator, effect): mediator on some but not every path


def _graph(context: Context) -> _Graph:
    key = _scenario_json(context)
    if key not in _GRAPHS:
        scenario = context.scenario
        ancestors = {name: scenario.ancestors(name) for name in context.measured()}
        effects = [(cause, effect) for effect in context.measured(("internal", "target"))
                   for cause in sorted(ancestors[effect])]
        between = {(cause, effect): sorted(name for name in ancestors[effect] if cause in ancestors[name])
                   for cause, effect in effects}
        cut = {(cause, effect, name): not _reaches(context, cause, effect, name)
               for (cause, effect), names in between.items() for name in names}
        dominators = {pair: [name for name in names if cut[(*pair, name)]] for pair, names in between.items()}
        partial = [(cause, name, effect) for (cause, effect), names in between.items() for name in names
                   if not cut[(cause, effect, name)]]
        if len(_GRAPHS) >= REPLAYS_KEPT:
            del _GRAPHS[next(iter(_GRAPHS))]
        _GRAPHS[key] = _Graph(effects, between, dominators, partial)
    return _GRAPHS[key]


def _effects(context: Context) -> list[tuple[str, str]]:
    """(cause, effect) pairs where effect is computed and cause is one of its ancestors."""
    return _graph(context).effects


def _reaches(context: Context, cause: str, effect: str, avoiding: str | None = None) -> bool:
    """Whether a directed path leads from `cause` to `effect` without passing through `avoiding`."""
    computed = {m.output for m in context.scenario.mechanisms}
    frontier, seen = [effect], set()
    while frontier:
        node = frontier.pop()
        if node == cause:
            return True
        if node in seen or node == avoiding:
            continue
        seen.add(node)
        if node in computed:
            frontier.extend(context.scenario.mechanism(node).parents())
    return False


def _dominators(context: Context, cause: str, effect: str) -> list[str]:
    """Variables on every directed path from `cause` to `effect`: holding one fixed cuts the effect."""
    return _graph(context).dominators.get((cause, effect), [])


def _partial_mediators(context: Context) -> list[tuple[str, str, str]]:
    """(cause, mediator, effect): the mediator is on some but not every path from cause to effect."""
    return _graph(context).partial


@per_dataset
def _slope(context: Context, x: str, y: str) -> float:
    """The observational least-squares slope of `y` on `x` (the naive causal effect per unit)."""
    return float(line_fit(context.table[x], context.table[y], 1)[0])
