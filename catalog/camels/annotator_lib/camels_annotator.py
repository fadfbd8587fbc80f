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


def read_scope(prompt: Path) -> dict:
    """Return the JSON scope block (entity_key, entities, start, end) of the rendered prompt."""
    match = SCOPE_BLOCK.search(prompt.read_text())
    if match is None:
        raise ValueError(f"{prompt}: no '## Scope' block with a ```json fence")
    return json.loads(match.group("json"))


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
