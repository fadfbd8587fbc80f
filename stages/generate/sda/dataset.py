"""Generate a scenario's table in topological order, with measurement noise and distractor columns.

Every random draw comes from a stream keyed by the seed and the variable's name, so a replay under
an intervention (`do`) sees the same exogenous noise and differs only downstream of what was set:
the causal templates derive their answers that way. The mechanisms act on the true values; the
table holds them with measurement noise added, the group factor, and distractor columns drawn
independently of everything. What produced the table (graph, equations, constants, standardizing
statistics, seed) is returned apart as hidden metadata and never written beside the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.integrate import LSODA

from stages.generate.sda.scenario import Mechanism, Scenario, Variable, compiled, evaluate, parse
from stages.hashing import content_hash

SPREAD_SIGMAS = 6.0  # a standardized causal variable spans its range at +-3 SD


@dataclass(frozen=True)
class Simulation:
    """The true values, the observed table and the hidden metadata of one generated dataset."""

    true: dict[str, np.ndarray]
    table: pd.DataFrame
    hidden: dict = field(repr=False)


def simulate(scenario: Scenario, n_rows: int, seed: int, do: dict[str, float] | None = None,
             observational: Simulation | None = None) -> Simulation:
    """The scenario's dataset of `n_rows`; `do` sets variables to constants (an intervention).

    Under an intervention, causal variables are standardized with the observational statistics:
    those of `observational` (the same scenario, rows and seed without `do`) when given. A variable
    downstream of no intervened one keeps its observational values: the same inputs and noise give them.
    """
    do = do or {}
    baseline = (observational or simulate(scenario, n_rows, seed)) if do else None
    reference = baseline.true if baseline else None
    unchanged = _unaffected(scenario, do) if do else set()
    levels = next(iter(scenario.groups.values()))
    level_of_row = _stream(seed, scenario.group).permutation(np.arange(n_rows) % len(levels))
    group = np.asarray(levels)[level_of_row]
    true: dict[str, np.ndarray] = {}
    standardizing: dict[str, tuple[float, float]] = {}
    for name in scenario.order():
        variable = scenario.variable(name)
        if name in unchanged:
            true[name] = baseline.true[name]
            if name in baseline.hidden["standardizing"]:
                standardizing[name] = tuple(baseline.hidden["standardizing"][name])
            continue
        rng = _stream(seed, name)
        exogenous = rng.uniform(size=n_rows), rng.standard_normal(n_rows)
        if name in do:
            values = np.full(n_rows, float(do[name]))
        elif variable.role == "source":
            values = variable.low + (variable.high - variable.low) * exogenous[0]
        else:
            mechanism = scenario.mechanism(name)
            values, stats = _mechanism(mechanism, true, exogenous[1], variable, reference)
            if stats is not None:
                standardizing[name] = stats
        if name not in do:
            values = values + _group_shift(scenario, name, level_of_row, variable.high - variable.low)
        true[name] = values
    observed = {name: _measured(scenario, name, true[name], seed) for name in true}
    for distractor in scenario.distractors:
        draw = _stream(seed, distractor.name).uniform(size=n_rows)
        observed[distractor.name] = distractor.low + (distractor.high - distractor.low) * draw
    columns = {"sample_id": [f"s{i + 1:04d}" for i in range(n_rows)], scenario.group: group}
    table = pd.DataFrame(columns | {name: np.round(observed[name], 6) for name in sorted(observed)})
    hidden = {"scenario": scenario.id, "seed": seed, "n_rows": n_rows, "edges": scenario.edges(),
              "mechanisms": [m.model_dump(mode="json") for m in scenario.mechanisms],
              "standardizing": {name: list(stats) for name, stats in sorted(standardizing.items())},
              "roles": {v.name: v.role for v in scenario.variables}
              | {d.name: "distractor" for d in scenario.distractors},
              "do": do}
    return Simulation(true, table, hidden)


def in_range_share(scenario: Scenario, simulation: Simulation) -> dict[str, float]:
    """Per computed variable, the share of true values inside its declared range (the range check)."""
    shares = {}
    for variable in scenario.variables:
        values = simulation.true[variable.name]
        shares[variable.name] = float(np.mean((values >= variable.low) & (values <= variable.high)))
    return shares


def _mechanism(mechanism: Mechanism, true: dict[str, np.ndarray], noise: np.ndarray, variable: Variable,
               reference: dict[str, np.ndarray] | None) -> tuple[np.ndarray, tuple[float, float] | None]:
    """A computed variable's true values; for a causal one also the (mean, sd) that standardized it."""
    values = {**true, **mechanism.constants}
    if mechanism.kind == "algebraic":
        result = np.broadcast_to(evaluate(parse(mechanism.expression), values), noise.shape).astype(float)
        return result, None
    if mechanism.kind == "ode":
        return _integrated(mechanism, values, len(noise)), None
    basis = reference or true
    raw = sum(weight * _standardized(true[parent], basis[parent])
              for parent, weight in sorted(mechanism.weights.items()))
    explained = sum(weight ** 2 for weight in mechanism.weights.values())
    raw = raw + np.sqrt(max(1.0 - explained, 0.05)) * noise
    if reference is None:
        mean, sd = float(raw.mean()), float(raw.std())
    else:
        observational = _mechanism(mechanism, reference, noise, variable, None)[1]
        mean, sd = observational
    width = variable.high - variable.low
    return (variable.low + variable.high) / 2 + (raw - mean) / sd * width / SPREAD_SIGMAS, (mean, sd)


def _integrated(mechanism: Mechanism, values: dict, n_rows: int) -> np.ndarray:
    """The end state of `d output/dt = expression` for every row at once (independent ODEs).

    SciPy's LSODA stepped to the end, as `solve_ivp(method="LSODA")` steps it, without keeping every
    step's state (only the last one is wanted).
    """
    derivative = compiled(parse(mechanism.expression))

    def rhs(t: float, state: np.ndarray) -> np.ndarray:
        return np.broadcast_to(derivative({**values, mechanism.output: state, "t": t}), state.shape)

    solver = LSODA(rhs, 0.0, np.full(n_rows, mechanism.initial), float(mechanism.duration), rtol=1e-8, atol=1e-10)
    while solver.status == "running":
        message = solver.step()
    if solver.status == "failed":
        raise ValueError(f"the ODE of {mechanism.output} did not integrate: {message}")
    return solver.y


def _unaffected(scenario: Scenario, do: dict[str, float]) -> set[str]:
    """The variables neither set by `do` nor downstream of one that is."""
    return {name for name in scenario.order() if name not in do and not scenario.ancestors(name) & do.keys()}


def _standardized(values: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """`values` standardized with the mean and SD of `basis` (the observational values)."""
    sd = basis.std()
    return (values - basis.mean()) / (sd if sd > 0 else 1.0)


def _group_shift(scenario: Scenario, name: str, level_of_row: np.ndarray, width: float) -> np.ndarray:
    """Each row's shift of `name` for its level (`level_of_row`: indices into the group's levels)."""
    shifts = scenario.group_effects.get(name, {})
    by_level = np.array([shifts.get(level, 0.0) for level in next(iter(scenario.groups.values()))])
    return by_level[level_of_row] * width / SPREAD_SIGMAS


def _measured(scenario: Scenario, name: str, values: np.ndarray, seed: int) -> np.ndarray:
    variable = scenario.variable(name)
    noise = scenario.mechanism(name).noise if variable.role != "source" else 0.01
    draw = _stream(seed, f"{name}:measurement").standard_normal(len(values))
    return values + noise * (variable.high - variable.low) / SPREAD_SIGMAS * draw


def _stream(seed: int, name: str) -> np.random.Generator:
    """A random stream of its own for each (seed, name)."""
    return np.random.default_rng([seed, int(content_hash(name, 8), 16)])
