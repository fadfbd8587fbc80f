"""Hand-made workspaces for the heuristic agent's tests: prompt blocks and staged tables."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd


def block(name: str, value: dict) -> str:
    """A prompt block with its JSON, as the prompts render them."""
    return f"## {name}\n\nSome words.\n\n```json\n{json.dumps(value, sort_keys=True)}\n```\n"


def write_workspace(root: Path, prompt: str, tables: dict[str, pd.DataFrame]) -> Path:
    """A workspace with the prompt and the tables as data/<name>.parquet."""
    (root / "data").mkdir(parents=True)
    (root / "work").mkdir()
    (root / "prompt.md").write_text(prompt)
    for name, frame in tables.items():
        frame.to_parquet(root / "data" / f"{name}.parquet", index=False)
    return root
