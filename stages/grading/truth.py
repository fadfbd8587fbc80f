"""Hidden truth: what staging withholds from a query's public files, and which rows an agent owes.

A truth kind (`TruthSpec.kind`) is a function of the query's scoped tables that returns the public
tables (with the evaluation target withheld), the hidden truth and the keys of the artifact rows the
agent must hand in. The truth goes to the query's private folder and never reaches a workspace.

- `holdout`: the target column is set to null from the split day (the last `test_share` of the
  scope's calendar days) on; the truth is its non-null values there; the agent owes every
  entity x day of the test period.
- `hidden_gaps`: runs of consecutive observed days are set to null, drawn per entity with a seed
  from the query id until about `fraction` of its observed days are hidden; the truth is the
  hidden values; the agent owes every entity-day whose target is null in the public table (real
  gaps included, so hidden and real gaps cannot be told apart).
- `signatures`: nothing is withheld; the truth is the benchmark's signature space of the scope's
  entities (`stages.grading.signatures`); the agent owes one row per entity.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, timedelta

import numpy as np
import pandas as pd

from stages.catalog import TruthSpec
from stages.grading.signatures import signature_space

PRECIPITATION = "prcp_mm_d"  # the forcing column the runoff-ratio signature divides by


@dataclass(frozen=True)
class Withheld:
    """A query's public tables after withholding, its hidden truth and the rows owed."""

    tables: dict[str, pd.DataFrame]
    truth: pd.DataFrame
    required: pd.DataFrame  # the key columns of every artifact row the agent must hand in


def split_day(start: date, end: date, test_share: float) -> date:
    """First test day: start + floor((1 - test_share) * N) days, N = calendar days in the scope."""
    n_days = (end - start).days + 1
    # Rounded before the floor: in floats 0.7 * 90 is 62.99999999999999, the rule means 63.
    return start + timedelta(days=int(np.floor(round((1 - test_share) * n_days, 9))))


def query_seed(query_id: str) -> int:
    """A 64-bit seed from the query id: the same query always hides the same days."""
    return int(hashlib.sha256(query_id.encode()).hexdigest()[:16], 16)


def _holdout(spec: TruthSpec, tables: dict[str, pd.DataFrame], key: str, start: date, end: date,
             query_id: str) -> Withheld:
    series = tables[spec.table].copy()
    first = pd.Timestamp(split_day(start, end, spec.test_share))
    test = pd.to_datetime(series["date"]) >= first
    truth = series.loc[test & series[spec.column].notna(), [key, "date", spec.column]]
    series.loc[test, spec.column] = None
    required = series.loc[test, [key, "date"]]
    return Withheld({**tables, spec.table: series}, truth.reset_index(drop=True),
                    required.reset_index(drop=True))


def _gap_runs(observed: np.ndarray, spec: TruthSpec, rng: np.random.Generator) -> np.ndarray:
    """Mask of hidden days: random runs over the series until `fraction` of observed days."""
    hidden = np.zeros(len(observed), dtype=bool)
    target = int(round(spec.fraction * observed.sum()))
    low, high = spec.run_days
    for _ in range(10_000):
        if (hidden & observed).sum() >= target:
            break
        length = int(rng.integers(low, high + 1))
        first = int(rng.integers(0, max(len(observed) - length, 0) + 1))
        hidden[first:first + length] = True
    return hidden & observed


def _hidden_gaps(spec: TruthSpec, tables: dict[str, pd.DataFrame], key: str, start: date,
                 end: date, query_id: str) -> Withheld:
    series = tables[spec.table].sort_values([key, "date"]).reset_index(drop=True)
    rng = np.random.default_rng(query_seed(query_id))
    hidden = np.zeros(len(series), dtype=bool)
    for _, rows in series.groupby(key, sort=True).indices.items():
        hidden[rows] = _gap_runs(series[spec.column].notna().to_numpy()[rows], spec, rng)
    truth = series.loc[hidden, [key, "date", spec.column]]
    series.loc[hidden, spec.column] = None
    required = series.loc[series[spec.column].isna(), [key, "date"]]
    return Withheld({**tables, spec.table: series}, truth.reset_index(drop=True),
                    required.reset_index(drop=True))


def _signatures(spec: TruthSpec, tables: dict[str, pd.DataFrame], key: str, start: date,
                end: date, query_id: str) -> Withheld:
    space = signature_space(tables[spec.table], key, spec.column, PRECIPITATION).reset_index()
    required = space[[key]]
    return Withheld(dict(tables), space, required)


TRUTHS: dict[str, Callable[..., Withheld]] = {
    "holdout": _holdout,
    "hidden_gaps": _hidden_gaps,
    "signatures": _signatures,
}


def withhold(spec: TruthSpec, tables: dict[str, pd.DataFrame], key: str, start: date, end: date,
             query_id: str) -> Withheld:
    """Withhold the query's evaluation target from its scoped tables (see the module docstring).

    Keys come back as text and dates as `datetime64[ns]` in the truth and the required rows.
    """
    withheld = TRUTHS[spec.kind](spec, tables, key, start, end, query_id)
    return replace(withheld, truth=_normal_keys(withheld.truth, key),
                   required=_normal_keys(withheld.required, key))


def _normal_keys(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    frame = frame.copy()
    frame[key] = frame[key].astype(str)
    if "date" in frame.columns:
        frame["date"] = pd.to_datetime(frame["date"]).astype("datetime64[ns]")
    return frame


def rows_rule(spec: TruthSpec, entity_key: str, start: date, end: date) -> str:
    """The prompt's sentence saying which artifact rows the agent must hand in."""
    if spec.kind == "holdout":
        first = split_day(start, end, spec.test_share)
        return (f"one row per `{entity_key}` of the scope and per day from {first.isoformat()} to "
                f"{end.isoformat()} (the test period, where `{spec.column}` is withheld)")
    if spec.kind == "hidden_gaps":
        return (f"one row per `{entity_key}` and day of the scope where `{spec.column}` is null in "
                "`data/` (some observed days were hidden for evaluation; real gaps are included)")
    return f"one row per `{entity_key}` of the scope"
