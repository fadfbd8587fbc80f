"""Mechanistic templates on a scenario mechanism's own equation, written out with its constants.

A constant refit from the table, a local elasticity, the input that matters most, which variable
enters it directly. Stated equations are parsed trees (`scenario.parse`), so a perturbation
exchanges two names or flips one operator of the tree.
"""

from __future__ import annotations

import ast
import warnings

import numpy as np
from scipy import optimize

from stages.generate.sda.scenario import Mechanism, compiled, evaluate, parse
from stages.generate.sda.templates.base import Binding, Context, Template, line_fit, per_dataset, pick
from stages.generate.sda.templates.mechanistic.shared import (
    DATA_FREE,
    FLIPPED,
    KNOWN_CONSTANTS,
    MARGIN,
    MAX_RELATIVE_ERROR,
    _per_dataset,
)


@per_dataset
def _columns(context: Context) -> dict[str, np.ndarray]:
    return {name: context.table[name].to_numpy() for name in context.measured()}


def _algebraic(context: Context) -> list[Mechanism]:
    return [m for m in context.scenario.mechanisms if m.kind == "algebraic"]


class _Renamed(ast.NodeTransformer):
    """Replace names: by a number (a constant written out) or by another name (two variables exchanged)."""

    def __init__(self, replacements: dict[str, ast.expr]):
        self.replacements = replacements

    def visit_Name(self, node: ast.Name) -> ast.expr:  # noqa: N802 (the NodeTransformer protocol)
        return self.replacements.get(node.id, node)


def _form(mechanism: Mechanism, unknown: str = "", exchange: str = "", flip: bool = False, slip: str = "",
          shown: bool = False) -> ast.Expression:
    """The mechanism's expression with its constants written out as numbers, except `unknown`.

    The perturbations of a stated equation: `exchange` ("a|b") swaps two variable names; `flip`
    changes the operator nearest above `unknown` (* and /, + and -); `slip` names a written constant
    taken ten times too large (a unit slip). `shown`: for the question text only (a negative constant
    in parentheses, so that `-c` never prints as `--2.0`).
    """
    def written(name: str, value: float) -> ast.expr:
        value = float(value) * (10.0 if name == slip else 1.0)
        return ast.Name(f"({value!r})", ast.Load()) if shown and value < 0 else ast.Constant(value)

    replacements: dict[str, ast.expr] = {name: written(name, value) for name, value in mechanism.constants.items()
                                         if name != unknown}
    if exchange:
        first, second = exchange.split("|")
        replacements |= {first: ast.Name(second, ast.Load()), second: ast.Name(first, ast.Load())}
    tree = _Renamed(replacements).visit(parse(mechanism.expression))
    if flip:
        above = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        node = next(n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == unknown)
        while node in above:
            node = above[node]
            if isinstance(node, ast.BinOp) and type(node.op) in FLIPPED:
                node.op = FLIPPED[type(node.op)]()
                break
    return ast.fix_missing_locations(tree)


def _shown_equation(mechanism: Mechanism, unknown: str = "") -> str:
    return f"{mechanism.output} = {ast.unparse(_form(mechanism, unknown, shown=True))}"


def _fit_constant(context: Context, binding: Binding) -> tuple[float, float]:
    """The least-squares value of the unknown constant in the stated equation, and its relative SE."""
    mechanism = context.scenario.mechanism(binding["output"])
    tree = _form(mechanism, binding["constant"], str(binding.get("exchange", "")), bool(binding.get("flip")),
                 str(binding.get("slip", "")))
    columns, equation = _columns(context), compiled(tree)
    observed = columns[binding["output"]]

    def residuals(parameter: np.ndarray) -> np.ndarray:
        predicted = equation(columns | {binding["constant"]: parameter[0]})
        return np.broadcast_to(predicted, observed.shape) - observed

    true = mechanism.constants[binding["constant"]]
    fits = []
    for start in (true, -true, true / 10, true * 10):  # several starts: a perturbed equation may have poles
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fit = optimize.least_squares(residuals, [start], method="lm", x_scale="jac", xtol=1e-12,
                                             ftol=1e-12)
            except ValueError:  # residuals not finite at the start
                continue
        if fit.success and np.isfinite(fit.fun).all():
            fits.append(fit)
    if not fits:
        return float("nan"), float("nan")
    fit = min(fits, key=lambda f: f.cost)
    value = float(fit.x[0])
    information = float(fit.jac[:, 0] @ fit.jac[:, 0])
    variance = 2 * fit.cost / (len(observed) - 1) / information if information > 0 else float("inf")
    return value, float(np.sqrt(variance) / abs(value)) if value else float("inf")


def _near(value: float, numbers: list[float] | tuple[float, ...], share: float = 0.05) -> bool:
    return any(abs(value - number) <= share * abs(number) for number in numbers)


def _numbers(mechanism: Mechanism) -> list[float]:
    """The numbers written in a mechanism's equation once its constants are filled in."""
    tree = _form(mechanism)
    return [float(node.value) for node in ast.walk(tree) if isinstance(node, ast.Constant)]


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
