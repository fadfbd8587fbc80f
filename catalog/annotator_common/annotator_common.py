"""What every domain's annotator scripts share: the prompt's blocks, the hand-in, the bootstrap.

Mounted beside each `reproduce.py` (with the domain's own `annotator_lib`), so a script imports
`from annotator_common import read_scope, ...`. One home for each of these: a domain library
imports them instead of writing its own.

- Reading the query: `read_block` parses one of the rendered prompt's JSON blocks (`## Scope`,
  `## Artifact`, `## Answer format`, ...); `read_scope` and `read_artifact_spec` name the two every
  script reads.
- Handing in: `write_answer` (work/answer.json: a metric task's `{"metrics": ...}` or a hypothesis
  task's `{"answer": ...}`, with work/bootstrap.json), `write_artifact` (the artifact block's
  columns) and `write_checkpoint` (an intermediate the scorer compares).
- Statistics: `ols` and `bootstrap`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

PROMPT = Path("prompt.md")
WORK = Path("work")
BLOCK = r"## {name}\n.*?```json\n(?P<json>.*?)\n```"  # a heading, then the first ```json fence
DIGITS = 6  # a metric's estimate is reported to 1e-6


def read_block(name: str, prompt: Path = PROMPT) -> dict:
    """The JSON of the rendered prompt's `## <name>` block (its first ```json fence)."""
    match = re.search(BLOCK.format(name=re.escape(name)), prompt.read_text(), re.DOTALL)
    if match is None:
        raise ValueError(f"{prompt}: no '## {name}' block with a ```json fence")
    return json.loads(match.group("json"))


def read_scope(prompt: Path = PROMPT) -> dict:
    """The scope block: entity_key, entities and, with a time axis, start and end."""
    return read_block("Scope", prompt)


def read_artifact_spec(prompt: Path = PROMPT) -> dict:
    """The artifact block: file, key, columns and the rows it owes."""
    return read_block("Artifact", prompt)


def write_answer(answer: object = None, replicates: list[float] | None = None, *,
                 metrics: Mapping[str, float] | None = None) -> None:
    """Write work/answer.json: a metric task's `metrics` or a hypothesis task's `answer`.

    `metrics` become `{"metrics": {name: value rounded to 1e-6}}`; otherwise `answer` is written as
    it is, `{"answer": answer}`, and `replicates` (the statistic on bootstrap resamples) go to
    work/bootstrap.json as `{"values": replicates}`.
    """
    if metrics is not None and (answer is not None or replicates is not None):
        raise ValueError("write_answer takes metrics or an answer (with its replicates), not both")
    document = ({"metrics": {name: round(float(value), DIGITS) for name, value in metrics.items()}}
                if metrics is not None else {"answer": answer})
    WORK.mkdir(exist_ok=True)
    (WORK / "answer.json").write_text(json.dumps(document, indent=2, sort_keys=True))
    if replicates is not None:
        (WORK / "bootstrap.json").write_text(json.dumps({"values": replicates}))


def write_artifact(frame: pd.DataFrame, artifact: dict, select: bool = True) -> None:
    """Write the artifact to work/<file> (no index): the block's key and value columns of `frame`,
    in the block's order (its value columns come sorted by name), or (`select=False`) `frame` as it
    is, for a script that builds exactly the artifact's columns in an order of its own."""
    WORK.mkdir(exist_ok=True)
    out = frame[[*artifact["key"], *artifact["columns"]]] if select else frame
    out.to_parquet(WORK / artifact["file"], index=False)


def write_checkpoint(name: str, frame: pd.DataFrame) -> None:
    """Write a checkpoint the scorer compares with an agent's (`work/<name>`, the index as columns)."""
    WORK.mkdir(exist_ok=True)
    frame.reset_index().to_parquet(WORK / name, index=False)


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
