"""Shared helpers of the camels annotator scripts: read a query's scope and data, score hydrographs.

Mounted read-only beside each task's reproduce.py (at /agent) when the annotator runs in the
sandbox. Like the scripts, it imports only what an agent's environment has (numpy, pandas).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

SCOPE_BLOCK = re.compile(r"## Scope\n.*?```json\n(?P<json>.*?)\n```", re.DOTALL)
ARTIFACT_BLOCK = re.compile(r"## Artifact\n.*?```json\n(?P<json>.*?)\n```", re.DOTALL)


def read_scope(prompt: Path) -> dict:
    """Return the JSON scope block (entity_key, entities, start, end) of the rendered prompt."""
    match = SCOPE_BLOCK.search(prompt.read_text())
    if match is None:
        raise ValueError(f"{prompt}: no '## Scope' block with a ```json fence")
    return json.loads(match.group("json"))


def read_artifact_spec(prompt: Path) -> dict:
    """Return the JSON artifact block (file, key, columns, rows) of the rendered prompt."""
    match = ARTIFACT_BLOCK.search(prompt.read_text())
    if match is None:
        raise ValueError(f"{prompt}: no '## Artifact' block with a ```json fence")
    return json.loads(match.group("json"))


def write_answer(metrics: dict | None = None, answer: object = None) -> None:
    """Write work/answer.json: `{"metrics": ...}` or `{"answer": ...}`."""
    document = {"metrics": metrics} if metrics is not None else {"answer": answer}
    Path("work").mkdir(exist_ok=True)
    Path("work/answer.json").write_text(json.dumps(document, indent=2, sort_keys=True))


def kge(obs: np.ndarray, sim: np.ndarray) -> float:
    """Kling-Gupta efficiency: 1 - sqrt((r - 1)^2 + (alpha - 1)^2 + (beta - 1)^2)."""
    r = np.corrcoef(obs, sim)[0, 1] if sim.std() > 0 else 0.0
    alpha = sim.std() / obs.std()
    beta = sim.mean() / obs.mean()
    return float(1.0 - np.sqrt((r - 1) ** 2 + (alpha - 1) ** 2 + (beta - 1) ** 2))


def read_timeseries(data_dir: Path, scope: dict, columns: list[str]) -> pd.DataFrame:
    """Rows of the scope's basins and dates only, sorted by basin and date."""
    key = scope["entity_key"]
    frame = pd.read_parquet(
        data_dir / "timeseries.parquet",
        columns=[key, "date", *columns],
        filters=[(key, "in", list(scope["entities"]))],
    )
    frame[key] = frame[key].astype(str)
    frame["date"] = pd.to_datetime(frame["date"])
    start, end = pd.Timestamp(scope["start"]), pd.Timestamp(scope["end"])
    frame = frame[frame["date"].between(start, end) & frame[key].isin(scope["entities"])]
    return frame.sort_values([key, "date"], kind="stable").reset_index(drop=True)


def split_day(scope: dict, test_share: float) -> pd.Timestamp:
    """First day of the test period: start + floor((1 - test_share) * calendar days in the scope)."""
    start, end = pd.Timestamp(scope["start"]), pd.Timestamp(scope["end"])
    n_days = (end - start).days + 1
    return start + pd.Timedelta(days=int(np.floor((1 - test_share) * n_days)))


def nse(obs: np.ndarray, sim: np.ndarray) -> float:
    """Nash-Sutcliffe efficiency: 1 - sum((sim - obs)^2) / sum((obs - mean(obs))^2)."""
    return float(1.0 - np.sum((sim - obs) ** 2) / np.sum((obs - obs.mean()) ** 2))
