"""Hiding strategies: artefacts put into the table an agent gets, to be undone before the analysis.

Each strategy returns the artefacted table and a sentence for the task text where the artefact
must be stated to be undone one way (a calibration offset and its size; that missing values are
coded, not the code; duplicated records are not stated, as in real files). The gold is derived on
the table `undo` recovers with only what the task text and the table give, so a correct analysis
reaches it and the judge can check that the artefact changes the answer. AutoSciBench's UMI example (count after
correcting a measurement artefact) is `calibration_offset`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pandas as pd

SENTINEL = -9999.0


def sentinel_missing(table: pd.DataFrame, column: str, rng: np.random.Generator) -> tuple[pd.DataFrame, str]:
    """5 % of the samples have `column` coded -9999 (every record of one); the text only says values are coded."""
    out = table.copy()
    ids = out["sample_id"].unique()
    coded = rng.choice(len(ids), size=max(1, len(ids) // 20), replace=False)
    out.loc[out["sample_id"].isin(ids[coded]), column] = SENTINEL
    return out, "Some values are missing, coded in the file; leave records with a missing value out."


def duplicated_records(table: pd.DataFrame, column: str, rng: np.random.Generator) -> tuple[pd.DataFrame, str]:
    """8 % of the records appear twice (same sample_id, same values), unstated; rows stay in sample_id order."""
    rows = rng.choice(len(table), size=max(1, len(table) * 8 // 100), replace=False)
    out = pd.concat([table, table.iloc[np.sort(rows)]]).sort_values("sample_id", kind="stable")
    return out.reset_index(drop=True), ""


def calibration_offset(table: pd.DataFrame, column: str, rng: np.random.Generator) -> tuple[pd.DataFrame, str]:
    """Half the samples measured on instrument B, which reads `column` high by a stated offset.

    The instrument belongs to the sample (every record of it); a coded missing value stays coded.
    """
    out = table.copy()
    ids = out["sample_id"].unique()
    on_b = out["sample_id"].isin(ids[rng.permutation(len(ids)) < len(ids) // 2]).to_numpy()
    offset = float(f"{out.loc[out[column] != SENTINEL, column].std():.4g}")  # stated exactly as applied
    out.insert(1, "instrument", np.where(on_b, "B", "A"))
    shifted = on_b & (out[column] != SENTINEL).to_numpy()
    out.loc[shifted, column] = out.loc[shifted, column] + offset
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
        out.loc[(out["instrument"] == "B") & (out[column] != SENTINEL), column] -= offset
        out = out.drop(columns="instrument")
    if "duplicated_records" in applied:
        out = out.drop_duplicates("sample_id").reset_index(drop=True)
    if "sentinel_missing" in applied:
        out = out[~(out.select_dtypes("number") == SENTINEL).any(axis=1)].reset_index(drop=True)
    return out


def cleaned(table: pd.DataFrame, note: str) -> pd.DataFrame:
    """What a careful analyst recovers from the table and the task text alone, not knowing the recipe.

    The stated calibration is undone (the column and offset read from the text), records repeated
    under one sample_id are kept once and records with a coded value are left out. The judge
    requires this to reproduce the gold, as the catalog requires its annotator script to.
    """
    stated = re.search(r"Instrument B reads (\S+) (\S+) too high", note)
    applied = ["duplicated_records", "sentinel_missing"]
    column = stated.group(1) if stated else ""
    if stated and "instrument" in table.columns:
        applied.insert(0, "calibration_offset")
    return undo(table, column, note, applied)
