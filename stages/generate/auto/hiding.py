"""Hiding strategies: artefacts put into the table an agent gets, to be undone before the analysis.

Each strategy returns the artefacted table and a sentence for the task text where the artefact
must be stated to be undone one way (a calibration offset and its size; that missing values are
coded, not the code; duplicated records are not stated, as in real files). The gold is derived on
the table `undo` recovers with only what the task text and the table give, so a correct analysis
reaches it and the judge can check that the artefact changes the answer. AutoSciBench's UMI example (count after
correcting a measurement artefact) is `calibration_offset`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

SENTINEL = -9999.0


def sentinel_missing(table: pd.DataFrame, column: str, rng: np.random.Generator) -> tuple[pd.DataFrame, str]:
    """5 % of `column` replaced by the code -9999; the text only says missing values are coded."""
    out = table.copy()
    rows = rng.choice(len(out), size=max(1, len(out) // 20), replace=False)
    out.loc[out.index[rows], column] = SENTINEL
    return out, "Some values are missing, coded in the file; leave records with a missing value out."


def duplicated_records(table: pd.DataFrame, column: str, rng: np.random.Generator) -> tuple[pd.DataFrame, str]:
    """8 % of the records appear twice (same sample_id), unstated; rows stay in sample_id order."""
    rows = rng.choice(len(table), size=max(1, len(table) * 8 // 100), replace=False)
    out = pd.concat([table, table.iloc[np.sort(rows)]]).sort_values("sample_id", kind="stable")
    return out.reset_index(drop=True), ""


def calibration_offset(table: pd.DataFrame, column: str, rng: np.random.Generator) -> tuple[pd.DataFrame, str]:
    """Half the samples measured on instrument B, which reads `column` high by a stated offset."""
    out = table.copy()
    on_b = rng.permutation(len(out)) < len(out) // 2
    offset = float(f"{out[column].std():.4g}")  # stated exactly as applied
    out.insert(1, "instrument", np.where(on_b, "B", "A"))
    out.loc[on_b, column] = out.loc[on_b, column] + offset
    return out, f"Instrument B reads {column} {offset:g} too high; instrument A is calibrated."


STRATEGIES: dict[str, Callable[[pd.DataFrame, str, np.random.Generator], tuple[pd.DataFrame, str]]] = {
    "sentinel_missing": sentinel_missing,
    "duplicated_records": duplicated_records,
    "calibration_offset": calibration_offset,
}


def undo(table: pd.DataFrame, column: str, note: str, applied: list[str]) -> pd.DataFrame:
    """The clean table recovered from the artefacted one with what the task states and the table shows."""
    out = table
    if "calibration_offset" in applied:
        offset = float(note.split(f"reads {column} ", 1)[1].split(" ", 1)[0])
        out = out.copy()
        out.loc[out["instrument"] == "B", column] -= offset
        out = out.drop(columns="instrument")
    if "duplicated_records" in applied:
        out = out.drop_duplicates("sample_id").reset_index(drop=True)
    if "sentinel_missing" in applied:
        out = out[~(out.select_dtypes("number") == SENTINEL).any(axis=1)].reset_index(drop=True)
    return out
