"""Mechanistic templates on a scenario mechanism's own equation, written out with its constants.

A constant refit from the table, a local elasticity, the input that matters most, which variable
enters it directly. Stated equations are parsed trees (`scenario.parse`), so a perturbation
exchanges two names or flips one operator of the tree; `stated` writes them and refits a constant.
"""

from __future__ import annotations

import numpy as np

from stages.generate.sda.scenario import Mechanism, evaluate
from stages.generate.sda.templates.base import Binding, Context, Template, line_fit, pick
from stages.generate.sda.templates.mechanistic.shared import (
    DATA_FREE,
    KNOWN_CONSTANTS,
    MARGIN,
    MAX_RELATIVE_ERROR,
    _per_dataset,
)
from stages.generate.sda.templates.mechanistic.stated import (
    _algebraic,
    _columns,
    _fit_constant,
    _form,
    _near,
    _numbers,
    _shown_equation,
)


@_per_dataset
def _askable_constants(context: Context) -> list[tuple[str, str]]:
    """(output, constant) pairs whose constant a fit recovers well (close to its true value, small SE)."""
    pairs = []
    for mechanism in _algebraic(context):
        if mechanism.output in context.scenario.group_effects:  # the stated equation would miss the group shift
            continue
        for constant, true in sorted(mechanism.constants.items()):
            if constant in KNOWN_CONSTANTS or "_per_" in constant or true == 0 or _near(true, DATA_FREE):
                continue
            value, relative_se = _fit_constant(context, {"output": mechanism.output, "constant": constant})
            if np.isfinite(value) and abs(value / true - 1) < 0.1 and relative_se < MAX_RELATIVE_ERROR:
                pairs.append((mechanism.output, constant))
    return pairs


def _bind_constant(context: Context, rng: np.random.Generator) -> Binding | None:
    pairs = _askable_constants(context)
    if not pairs:
        return None
    output, constant = pairs[rng.integers(len(pairs))]
    return {"output": output, "constant": constant,
            "equation": _shown_equation(context.scenario.mechanism(output), constant)}


def _fitted_constant(context: Context, binding: Binding) -> float:
    return _fit_constant(context, binding)[0]


def _inputs_exchanged(context: Context, binding: Binding) -> list[Binding]:
    """The fit with two of the equation's inputs exchanged (the roles of two columns confused)."""
    parents = context.scenario.mechanism(binding["output"]).parents()
    return [binding | {"exchange": f"{first}|{second}"} for i, first in enumerate(parents)
            for second in parents[i + 1:]][:2]


def _equation_misread(context: Context, binding: Binding) -> list[Binding]:
    """The fit with one element of the stated equation misread.

    First another written constant taken ten times too large, then the operator next to the unknown flipped.
    """
    others = [name for name in context.scenario.mechanism(binding["output"]).constants if name != binding["constant"]]
    return [*(binding | {"slip": name} for name in others[:1]), binding | {"flip": 1.0}]


def _elasticity(context: Context, binding: Binding) -> float:
    """The elasticity d ln f / d ln x of the stated equation at the inputs' medians (central difference)."""
    mechanism = context.scenario.mechanism(binding["output"])
    x = binding["x"]
    if binding.get("marginal"):  # the data's log-log slope, every other input left varying
        with np.errstate(all="ignore"):
            logs = np.log(context.table[[x, binding["output"]]].to_numpy())
        return float(line_fit(logs[:, 0], logs[:, 1], 1)[0]) if np.isfinite(logs).all() else float("nan")
    tree = _form(mechanism)
    point = {name: float(context.table[name].median()) for name in mechanism.parents()}
    step = 1e-6 * abs(point[x])
    with np.errstate(all="ignore"):
        up, down, middle = (float(evaluate(tree, point | {x: point[x] + shift})) for shift in (step, -step, 0.0))
    derivative = (up - down) / (2 * step) if step else float("nan")
    if binding.get("unscaled"):  # the plain derivative, not turned into a relative change
        return derivative
    return derivative * point[x] / middle if middle else float("nan")


@_per_dataset
def _elasticity_pairs(context: Context) -> list[tuple[str, str]]:
    """(output, input) of algebraic mechanisms with an elasticity that is neither tiny nor written out."""
    pairs = []
    for mechanism in _algebraic(context):
        for x in mechanism.parents():
            value = _elasticity(context, {"output": mechanism.output, "x": x})
            if np.isfinite(value) and abs(value) >= 0.05 and not _near(value, [*DATA_FREE, *_numbers(
                    mechanism)]):  # an exponent written in the equation would give the answer away
                pairs.append((mechanism.output, x))
    return pairs


def _bind_elasticity(context: Context, rng: np.random.Generator) -> Binding | None:
    pairs = _elasticity_pairs(context)
    if not pairs:
        return None
    output, x = pairs[rng.integers(len(pairs))]
    mechanism = context.scenario.mechanism(output)
    return {"output": output, "x": x, "equation": _shown_equation(mechanism),
            "inputs": ", ".join(mechanism.parents())}


def _other_inputs(context: Context, binding: Binding) -> list[Binding]:
    return [binding | {"x": other} for other in context.scenario.mechanism(binding["output"]).parents()
            if other != binding["x"]][:2]


def _bind_direct_input(context: Context, rng: np.random.Generator) -> Binding | None:
    options = []
    for output in context.measured(("internal", "target")):
        parents = context.scenario.mechanism(output).parents()
        indirect = sorted(context.scenario.ancestors(output) - set(parents))
        rest = [name for name in context.measured() if name not in (*parents, *indirect, output)]
        if len(indirect) + len(rest) >= 3:
            options.append((output, parents, indirect, rest))
    if not options:
        return None
    output, parents, indirect, rest = options[rng.integers(len(options))]
    hard = pick(rng, indirect, min(2, len(indirect)))  # ancestors acting only through other variables
    others = hard + pick(rng, rest, min(3 - len(hard), len(rest)))
    others += pick(rng, [n for n in indirect if n not in others], 3 - len(others))
    return {"output": output, "candidates": ", ".join(sorted([pick(rng, parents)[0], *others]))}


def _direct_input(context: Context, binding: Binding) -> str:
    candidates = binding["candidates"].split(", ")
    if binding.get("naive"):  # the candidate most correlated with the output
        table = context.table
        return max(candidates, key=lambda name: abs(table[name].corr(table[binding["output"]])))
    parents = context.scenario.mechanism(binding["output"]).parents()
    return next(name for name in candidates if name in parents)


def _median_errors(context: Context, output: str, candidates: list[str]) -> dict[str, float]:
    """Per candidate, the RMS difference of the stated equation from the observed output.

    The equation is evaluated on the table's rows with that candidate replaced by its median.
    """
    mechanism = context.scenario.mechanism(output)
    tree, columns = _form(mechanism), _columns(context)
    errors = {}
    for name in candidates:
        values = columns | ({name: np.full(len(context.table), float(np.median(columns[name])))}
                            if name in mechanism.parents() else {})
        with np.errstate(all="ignore"):
            predicted = np.broadcast_to(evaluate(tree, values), columns[output].shape)
        errors[name] = float(np.sqrt(np.mean((predicted - columns[output]) ** 2)))
    return errors


@_per_dataset
def _dominant_options(context: Context) -> list[tuple[Mechanism, list[str], list[str]]]:
    """(mechanism, candidates, other variables) where one candidate's median replacement clearly hurts most."""
    options = []
    for mechanism in _algebraic(context):
        parents = list(mechanism.parents())
        others = [n for n in context.measured() if n not in parents and n != mechanism.output]
        if len(parents) < 2 or len(parents) + len(others) < 3:
            continue
        candidates = parents + others[:max(3 - len(parents), 0)]
        errors = _median_errors(context, mechanism.output, candidates)
        top, second = sorted(errors.values(), reverse=True)[:2]
        if np.isfinite(top) and top >= MARGIN * second:
            options.append((mechanism, candidates, others))
    return options


def _bind_dominant_input(context: Context, rng: np.random.Generator) -> Binding | None:
    options = _dominant_options(context)
    if not options:
        return None
    mechanism, candidates, others = options[rng.integers(len(options))]
    if len(candidates) == len(mechanism.parents()) and others and len(candidates) < 4:
        candidates = [*candidates, pick(rng, others)[0]]  # a variable that is no input at all
    return {"output": mechanism.output, "equation": _shown_equation(mechanism),
            "candidates": ", ".join(sorted(candidates))}


def _dominant_input(context: Context, binding: Binding) -> str:
    candidates = binding["candidates"].split(", ")
    if binding.get("naive"):  # the candidate most correlated with the output
        table = context.table
        return max(candidates, key=lambda name: abs(table[name].corr(table[binding["output"]])))
    errors = _median_errors(context, binding["output"], candidates)
    return max(errors, key=errors.get)


TEMPLATES = [
    Template("mechanistic.fitted_constant", "mechanistic",
             "{output} is produced by the mechanism {equation}, where every constant is as written except"
             " {constant}, which is unknown. What value of {constant} does an ordinary least-squares fit of this"
             " equation to the table (residuals in {output}) give?",
             "number", _bind_constant, _fitted_constant, _inputs_exchanged, _equation_misread, tolerance=0.03),
    Template("mechanistic.elasticity", "mechanistic",
             "{output} is produced by the mechanism {equation}. With each of its inputs ({inputs}) at its median"
             " in the table, what is the elasticity of {output} with respect to {x}, d ln({output}) / d ln({x})?",
             "number", _bind_elasticity, _elasticity, _other_inputs,
             lambda c, b: [b | {"marginal": 1.0}, b | {"unscaled": 1.0}], tolerance=0.02),
    Template("mechanistic.direct_input", "mechanistic",
             "Of {candidates}, which one enters the mechanism that produces {output} directly, rather than only"
             " through other variables or not at all?",
             "entity", _bind_direct_input, _direct_input, lambda c, b: [],
             lambda c, b: [b | {"naive": 1.0}]),
    Template("mechanistic.dominant_input", "mechanistic",
             "{output} is produced by the mechanism {equation}. Evaluate this equation on every row of the table"
             " with one of {candidates} replaced by its median (everything else as observed): which replacement"
             " gives the largest root-mean-square difference from the observed {output}?",
             "entity", _bind_dominant_input, _dominant_input, lambda c, b: [],
             lambda c, b: [b | {"naive": 1.0}]),
]
