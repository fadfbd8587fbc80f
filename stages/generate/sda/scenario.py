"""A scenario: a semantic DAG of measured variables and the mechanisms that produce them.

Source variables are drawn from their admissible range; every other variable is computed from its
parents by a mechanism: an algebraic expression, the end state of an ODE, or (on the causal
sub-DAG) an internally standardized structural equation. Expressions are a small, safe subset of
Python (numbers, names, + - * / **, and the functions in `FUNCTIONS`), parsed once and evaluated on
NumPy arrays, so a perturbation (swap two names, change one operator or constant) is an edit of a
tree, not of source text.
"""

from __future__ import annotations

import ast
import functools
import threading
from collections.abc import Callable, Mapping
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

DOMAINS = ("biology", "chemistry", "environment", "geography", "physics")
FUNCTIONS = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
             "abs": np.abs, "minimum": np.minimum, "maximum": np.maximum}
_PARSING = threading.Lock()
OPERATORS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide, ast.Pow: np.power}


class Variable(BaseModel):
    """A measured quantity: a column of the generated table."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
    role: Literal["source", "internal", "target"]
    unit: str
    low: float
    high: float
    description: str

    @model_validator(mode="after")
    def _range(self) -> Variable:
        if not self.low < self.high:
            raise ValueError(f"{self.name}: low must be below high")
        return self


class Mechanism(BaseModel):
    """How `output` follows from its parents.

    `algebraic`: `output = expression`. `ode`: `d output / dt = expression` (which may use `output`
    itself), integrated from `initial` over `[0, duration]`, the end state recorded. `causal`:
    `output` is the standardized sum `sum(weights[p] * z(p)) + noise`, mapped onto the variable's
    range (an internally standardized SCM); `expression` is unused.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    output: str
    kind: Literal["algebraic", "ode", "causal"] = "algebraic"
    expression: str = ""
    constants: dict[str, float] = {}
    weights: dict[str, float] = {}
    initial: float = 0.0
    duration: float = 1.0
    noise: float = Field(0.02, ge=0, le=0.5)  # measurement noise, relative to the variable's spread

    def parents(self) -> tuple[str, ...]:
        """The variables this mechanism reads, in a stable order."""
        if self.kind == "causal":
            return tuple(sorted(self.weights))
        return tuple(sorted(_names(self.expression) - set(self.constants) - set(FUNCTIONS) - {self.output, "t"}))


class Scenario(BaseModel):
    """A scientific setting with its variables, mechanisms and distractor columns."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
    domain: Literal[DOMAINS]
    title: str
    unit_of_observation: str
    variables: tuple[Variable, ...]
    mechanisms: tuple[Mechanism, ...]
    groups: dict[str, tuple[str, ...]] = Field(min_length=1, max_length=1)  # one categorical factor
    group_effects: dict[str, dict[str, float]] = {}  # variable -> level -> shift, in spreads
    distractors: tuple[Variable, ...] = ()

    @model_validator(mode="after")
    def _a_dag_over_declared_variables(self) -> Scenario:
        names = [v.name for v in (*self.variables, *self.distractors)] + list(self.groups)
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: a name is used twice")
        declared = {v.name: v for v in self.variables}
        outputs = [m.output for m in self.mechanisms]
        computed = {v.name for v in self.variables if v.role != "source"}
        if sorted(outputs) != sorted(computed):
            raise ValueError(f"{self.id}: every internal and target variable needs exactly one mechanism")
        for mechanism in self.mechanisms:
            unknown = set(mechanism.parents()) - set(declared)
            if unknown or not mechanism.parents():
                raise ValueError(f"{self.id}: mechanism of {mechanism.output} reads "
                                 f"{sorted(unknown) or 'no variable'}")
        for variable, shifts in self.group_effects.items():
            if variable not in declared or set(shifts) - set(next(iter(self.groups.values()))):
                raise ValueError(f"{self.id}: group effect on {variable} names an unknown variable or level")
        if not any(v.role == "target" for v in self.variables):
            raise ValueError(f"{self.id}: no target variable")
        self.order()  # raises on a cycle
        return self

    @property
    def group(self) -> str:
        """The name of the categorical factor."""
        return next(iter(self.groups))

    def variable(self, name: str) -> Variable:
        """A declared variable by name."""
        return next(v for v in (*self.variables, *self.distractors) if v.name == name)

    def mechanism(self, output: str) -> Mechanism:
        """The mechanism computing `output`."""
        return next(m for m in self.mechanisms if m.output == output)

    def order(self) -> list[str]:
        """Variables in topological order (ties by declaration order)."""
        parents = {m.output: set(m.parents()) for m in self.mechanisms}
        done: list[str] = []
        pending = [v.name for v in self.variables]
        while pending:
            ready = [name for name in pending if parents.get(name, set()) <= set(done)]
            if not ready:
                raise ValueError(f"{self.id}: the mechanisms form a cycle among {pending}")
            done.append(ready[0])
            pending.remove(ready[0])
        return done

    def edges(self) -> list[tuple[str, str]]:
        """Every (parent, child) edge of the semantic DAG, sorted."""
        return sorted((parent, m.output) for m in self.mechanisms for parent in m.parents())

    def ancestors(self, name: str) -> set[str]:
        """Every variable `name` depends on, directly or not."""
        found: set[str] = set()
        frontier = [name]
        while frontier:
            node = frontier.pop()
            if node in {m.output for m in self.mechanisms}:
                for parent in self.mechanism(node).parents():
                    if parent not in found:
                        found.add(parent)
                        frontier.append(parent)
        return found


@functools.cache
def _names(expression: str) -> frozenset[str]:
    """Every name an expression reads (parsed once per expression: the graph queries ask for parents often)."""
    return frozenset(node.id for node in ast.walk(parse(expression)) if isinstance(node, ast.Name))


def parse(expression: str) -> ast.Expression:
    """An expression's tree; anything outside the allowed subset raises ValueError."""
    with _PARSING:  # CPython 3.11's parser is not safe to enter from two threads at once
        tree = ast.parse(expression, mode="eval")
    for node in ast.walk(tree):
        allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd, ast.Name, ast.Load,
                   ast.Constant, ast.Call, *OPERATORS)
        if not isinstance(node, allowed):
            raise ValueError(f"{expression!r}: {type(node).__name__} is not allowed in a mechanism")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                                               and not node.keywords):
            raise ValueError(f"{expression!r}: only the functions {sorted(FUNCTIONS)} may be called")
        if isinstance(node, ast.Constant) and not isinstance(node.value, int | float):
            raise ValueError(f"{expression!r}: only numbers may be constants")
    return tree


def evaluate(tree: ast.Expression | ast.expr, values: Mapping[str, np.ndarray | float]) -> np.ndarray:
    """Evaluate a parsed expression on arrays (`values`: names to arrays or numbers)."""
    return compiled(tree)(values)


def compiled(tree: ast.Expression | ast.expr) -> Callable[[Mapping[str, np.ndarray | float]], np.ndarray]:
    """The expression as a function of `values`, for evaluating one tree many times (an ODE's right side).

    Each node is a closure making the NumPy call the node names, on its children's values in order;
    a name without a value raises KeyError.
    """
    node = tree.body if isinstance(tree, ast.Expression) else tree
    if isinstance(node, ast.Constant):
        constant = np.float64(node.value)
        return lambda values: constant
    if isinstance(node, ast.Name):
        return functools.partial(_value_of, node.id)
    if isinstance(node, ast.UnaryOp):
        operand = compiled(node.operand)
        return (lambda values: -operand(values)) if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        operator, left, right = OPERATORS[type(node.op)], compiled(node.left), compiled(node.right)
        return lambda values: operator(left(values), right(values))
    function, arguments = FUNCTIONS[node.func.id], [compiled(argument) for argument in node.args]
    return lambda values: function(*(argument(values) for argument in arguments))


def _value_of(name: str, values: Mapping[str, np.ndarray | float]) -> np.ndarray | float:
    if name not in values:
        raise KeyError(f"no value for {name!r}")
    return values[name]
