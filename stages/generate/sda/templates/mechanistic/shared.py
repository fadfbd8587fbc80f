"""What the mechanistic templates share: constants and the per-dataset cache of eligible choices."""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable

import pandas as pd

from stages.generate.sda.templates.base import Context

GAS_CONSTANT = 8.314  # J/(mol K)
KELVIN_OFFSET = {"K": 0.0, "degC": 273.15}  # temperature units an Arrhenius fit accepts
# constants a responder would know without the data (physical constants, unit conversions): never asked for
KNOWN_CONSTANTS = frozenset({"pi", "g", "r", "hc", "faraday", "ln10", "deg", "gamma_w", "c_water", "percent"})
MAX_RELATIVE_ERROR = 0.01  # standard error of a fitted constant, relative to it, for the constant to be asked
MARGIN = 1.25  # the chosen entity's score is at least this multiple of the runner-up's
DATA_FREE = (0.5, 1.0, -1.0)  # answers a responder offers without the data (an elasticity of 1 is not asked)
FLIPPED = {ast.Mult: ast.Div, ast.Div: ast.Mult, ast.Add: ast.Sub, ast.Sub: ast.Add}
ELIGIBLE_KEPT = 256  # eligibility lists kept in memory (a binder is called on every draw)
_ELIGIBLE: dict[tuple, list] = {}


def _per_dataset(compute: Callable[[Context], list]) -> Callable[[Context], list]:
    """Memoize what a binder may choose from, per dataset (scenario and table): binders run on every draw.

    Kept in the context, and across contexts of the same scenario and table (the AutoSciBench loop
    builds a context per recipe); the table is hashed once per context.
    """
    def cached(context: Context) -> list:
        return context.remembered(("eligible", compute.__name__), lambda: _across_contexts(compute, context))

    return cached


def _across_contexts(compute: Callable[[Context], list], context: Context) -> list:
    table = hashlib.sha256(pd.util.hash_pandas_object(context.table).to_numpy().tobytes()).hexdigest()
    key = (compute.__name__, context.scenario.model_dump_json(), table)
    if key not in _ELIGIBLE:
        if len(_ELIGIBLE) >= ELIGIBLE_KEPT:
            del _ELIGIBLE[next(iter(_ELIGIBLE))]
        _ELIGIBLE[key] = compute(context)
    return _ELIGIBLE[key]
