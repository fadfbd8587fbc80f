"""A scenario mechanism's equation as the mechanistic templates state it, and a constant refit from it.

`_form` writes the mechanism's expression out with its constants as numbers (or perturbed: two
names exchanged, an operator flipped, a constant ten times too large); `_fit_constant` refits the
one constant left unknown to the table by least squares.
"""

from __future__ import annotations

import ast
import warnings

import numpy as np
from scipy import optimize

from stages.generate.sda.scenario import Mechanism, compiled, parse
from stages.generate.sda.templates.base import Binding, Context, per_dataset
from stages.generate.sda.templates.mechanistic.shared import FLIPPED


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
