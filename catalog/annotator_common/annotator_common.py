"""Helpers every domain's annotator scripts may use: the scope block, the bootstrap, the hand-in.

Mounted beside each `reproduce.py` (with the domain's own `annotator_lib`), so a script imports
`from annotator_common import read_scope, ...`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

SCOPE_BLOCK = re.compile(r"## Scope\n.*?```json\n(?P<json>.*?)\n```", re.DOTALL)
WORK = Path("work")


def read_scope(prompt: Path = Path("prompt.md")) -> dict:
    """The JSON scope block (entity_key, entities and, with a time axis, start and end)."""
    match = SCOPE_BLOCK.search(prompt.read_text())
    if match is None:
        raise ValueError(f"{prompt}: no '## Scope' block with a ```json fence")
    return json.loads(match.group("json"))


def ols(y: np.ndarray, *columns: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of y on an intercept and the columns (intercept first)."""
    design = np.column_stack([np.ones_like(y), *columns])
    return np.linalg.lstsq(design, y, rcond=None)[0]


def bootstrap(n: int, statistic: Callable[[np.ndarray], float], replicates: int = 500,
              seed: int = 0) -> list[float]:
    """`statistic(indices)` on resamples of n entities with replacement (undefined ones skipped)."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(replicates):
        try:
            value = statistic(rng.integers(0, n, n))
        except (ValueError, np.linalg.LinAlgError, FloatingPointError):
            continue
        if np.isfinite(value):
            values.append(float(value))
    return values


def write_checkpoint(name: str, frame: pd.DataFrame) -> None:
    """Write a checkpoint the scorer compares with an agent's (`work/<name>`)."""
    WORK.mkdir(exist_ok=True)
    frame.reset_index().to_parquet(WORK / name, index=False)


def write_answer(answer: object, replicates: list[float] | None = None) -> None:
    """Write work/answer.json (and work/bootstrap.json when replicates are given)."""
    WORK.mkdir(exist_ok=True)
    (WORK / "answer.json").write_text(json.dumps({"answer": answer}, indent=2))
    if replicates is not None:
        (WORK / "bootstrap.json").write_text(json.dumps({"values": replicates}))
