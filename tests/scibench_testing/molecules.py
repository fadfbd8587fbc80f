"""Molecule-reader test helpers shared by the molecules reader tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stages.sources import molecules
from stages.sources.molecules import Params, RawFormatError
from stages.sources.molecules.records import Record


def tables(raw_dir: Path, **params) -> dict[str, pd.DataFrame]:
    return {t.name: t.frame for t in molecules.read(raw_dir, Params(**params))}


def records_of(path: Path) -> list[Record | RawFormatError]:
    return list(molecules.read_records(path))


def write(root: Path, name: str, text: str | bytes) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path
