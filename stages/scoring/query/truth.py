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
- `held_out_entities`: a share of the scope's entities, drawn with a seed from the query id (at
  least one, leaving at least two public), have the target withheld on every time step: prediction
  where nothing was measured; the agent owes every time step of each held-out entity.
- `signatures`: nothing is withheld; the truth is the benchmark's signature space of the scope's
  entities (`stages.scoring.query.signatures`); the agent owes one row per entity.
- `profiles`: nothing is withheld; the truth is a per-entity feature space of the target
  (`stages.scoring.query.profiles`), in which a partition is graded; one row per entity.
- `labels`: a hidden per-entity label (a column of the `entities` table) is removed from the
  public files; the truth is the label; one row per entity.

Time: the truth table's time column (`TruthSpec.time`) is a date (`date`), a timestamp
(`timestamp_start`) or a whole year (`harvest_year`, `year`). A holdout on years tests the last
`test_share` of the scope's calendar years.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, timedelta

import numpy as np
import pandas as pd

from stages.catalog import TruthSpec
from stages.evaluation.agents.scripts.reference_models import instants
from stages.scoring.query.profiles import profile_space
from stages.scoring.query.signatures import signature_space

PRECIPITATION = "prcp_mm_d"  # the forcing column the runoff-ratio signature divides by
YEAR_COLUMNS = ("harvest_year", "year")  # time columns holding whole years
TIMESTAMP_COLUMNS = ("timestamp_start",)  # time columns holding instants (kept to the second)


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


def split_year(start: date, end: date, test_share: float) -> int:
    """First test year: start year + floor((1 - test_share) * N), N = calendar years in the scope."""
    n_years = end.year - start.year + 1
    return start.year + int(np.floor(round((1 - test_share) * n_years, 9)))


def test_start(spec: TruthSpec, start: date, end: date) -> date:
    """The first day of the test period of a holdout (1 January of the first test year on years)."""
    if spec.time in YEAR_COLUMNS:
        return date(split_year(start, end, spec.test_share), 1, 1)
    return split_day(start, end, spec.test_share)


def time_values(frame: pd.DataFrame, column: str) -> pd.Series:
    """The time column as naive UTC timestamps (a year as 1 January of that year)."""
    if column in YEAR_COLUMNS:
        return pd.to_datetime(frame[column].astype(int).astype(str) + "-01-01")
    return instants(frame[column])


def query_seed(query_id: str) -> int:
    """A 64-bit seed from the query id: the same query always hides the same days."""
    return int(hashlib.sha256(query_id.encode()).hexdigest()[:16], 16)


def held_out(entities: list[str], test_share: float, query_id: str) -> list[str]:
    """The entities a `held_out_entities` query withholds: a seeded draw, sorted.

    round(test_share * n), at least one, and at most n - 2 so that two entities stay public.
    """
    pool = sorted(str(e) for e in entities)
    count = min(max(int(round(test_share * len(pool))), 1), max(len(pool) - 2, 0))
    if count == 0:
        return []
    rng = np.random.default_rng(query_seed(query_id))
    return sorted(rng.choice(np.array(pool), size=count, replace=False).tolist())


def _holdout(spec: TruthSpec, tables: dict[str, pd.DataFrame], key: str, start: date, end: date,
             query_id: str, entities: list[str]) -> Withheld:
    series = tables[spec.table].copy()
    test = (time_values(series, spec.time) >= pd.Timestamp(test_start(spec, start, end))).to_numpy()
    truth = series.loc[test & series[spec.column].notna().to_numpy(), [key, spec.time, spec.column]]
    series.loc[test, spec.column] = None
    required = series.loc[test, [key, spec.time]]
    return Withheld({**tables, spec.table: series}, truth.reset_index(drop=True),
                    required.reset_index(drop=True))


def _gap_runs(observed: np.ndarray, spec: TruthSpec, rng: np.random.Generator) -> np.ndarray:
    """Mask of hidden steps: random runs over the series until `fraction` of observed steps."""
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
                 end: date, query_id: str, entities: list[str]) -> Withheld:
    series = tables[spec.table].sort_values([key, spec.time]).reset_index(drop=True)
    rng = np.random.default_rng(query_seed(query_id))
    hidden = np.zeros(len(series), dtype=bool)
    for _, rows in series.groupby(key, sort=True).indices.items():
        hidden[rows] = _gap_runs(series[spec.column].notna().to_numpy()[rows], spec, rng)
    truth = series.loc[hidden, [key, spec.time, spec.column]]
    series.loc[hidden, spec.column] = None
    required = series.loc[series[spec.column].isna(), [key, spec.time]]
    return Withheld({**tables, spec.table: series}, truth.reset_index(drop=True),
                    required.reset_index(drop=True))


def _held_out_entities(spec: TruthSpec, tables: dict[str, pd.DataFrame], key: str, start: date,
                       end: date, query_id: str, entities: list[str]) -> Withheld:
    series = tables[spec.table].copy()
    hidden = series[key].astype(str).isin(held_out(entities, spec.test_share, query_id)).to_numpy()
    truth = series.loc[hidden & series[spec.column].notna().to_numpy(), [key, spec.time, spec.column]]
    series.loc[hidden, spec.column] = None
    required = series.loc[hidden, [key, spec.time]]
    return Withheld({**tables, spec.table: series}, truth.reset_index(drop=True),
                    required.reset_index(drop=True))


def _signatures(spec: TruthSpec, tables: dict[str, pd.DataFrame], key: str, start: date,
                end: date, query_id: str, entities: list[str]) -> Withheld:
    space = signature_space(tables[spec.table], key, spec.column, PRECIPITATION).reset_index()
    return Withheld(dict(tables), space, space[[key]])


def _profiles(spec: TruthSpec, tables: dict[str, pd.DataFrame], key: str, start: date,
              end: date, query_id: str, entities: list[str]) -> Withheld:
    frame = tables[spec.table].assign(_time=lambda f: time_values(f, spec.time))
    space = profile_space(frame, key, "_time", spec.column, spec.features).reset_index()
    return Withheld(dict(tables), space, space[[key]])


def _labels(spec: TruthSpec, tables: dict[str, pd.DataFrame], key: str, start: date, end: date,
            query_id: str, entities: list[str]) -> Withheld:
    entities = tables[spec.table]
    truth = entities[[key, spec.column]].sort_values(key).reset_index(drop=True)
    public = {**tables, spec.table: entities.drop(columns=[spec.column])}
    return Withheld(public, truth, truth[[key]])


TRUTHS: dict[str, Callable[..., Withheld]] = {
    "holdout": _holdout,
    "hidden_gaps": _hidden_gaps,
    "held_out_entities": _held_out_entities,
    "signatures": _signatures,
    "profiles": _profiles,
    "labels": _labels,
}


def withhold(spec: TruthSpec, tables: dict[str, pd.DataFrame], key: str, start: date, end: date,
             query_id: str, entities: list[str] | None = None) -> Withheld:
    """Withhold the query's evaluation target from its scoped tables (see the module docstring).

    Keys come back as text, dates and timestamps as `datetime64[ns]` and years as int64 in the
    truth and the required rows. `entities` is the scope's entity list (a held-out draw is made
    from it, as the prompt's artifact block shows).
    """
    if entities is None:  # the scope's entities: by default those the table holds
        entities = sorted(tables[spec.table][key].astype(str).unique())
    withheld = TRUTHS[spec.kind](spec, tables, key, start, end, query_id, list(entities))
    return replace(withheld, truth=normal_keys(withheld.truth, key),
                   required=normal_keys(withheld.required, key))


def normal_keys(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """Key columns in the one form truth, required rows and artifacts are joined on."""
    frame = frame.copy()
    frame[key] = frame[key].astype(str)
    for column in frame.columns:
        if column == "date":
            frame[column] = instants(frame[column]).dt.normalize()
        elif column in TIMESTAMP_COLUMNS:
            frame[column] = instants(frame[column])
        elif column in YEAR_COLUMNS:
            frame[column] = frame[column].astype(np.int64)
    return frame


def rows_rule(spec: TruthSpec, entity_key: str, start: date, end: date,
              held: list[str] | None = None) -> str:
    """The prompt's sentence saying which artifact rows the agent must hand in."""
    step = "year" if spec.time in YEAR_COLUMNS else ("time step" if spec.time in TIMESTAMP_COLUMNS
                                                      else "day")
    if spec.kind == "holdout":
        first = test_start(spec, start, end)
        span = (f"{first.year} to {end.year}" if spec.time in YEAR_COLUMNS
                else f"{first.isoformat()} to {end.isoformat()}")
        return (f"one row per `{entity_key}` of the scope and per {step} (`{spec.time}`) from {span} "
                f"(the test period, where `{spec.column}` is withheld)")
    if spec.kind == "hidden_gaps":
        return (f"one row per `{entity_key}` and {step} (`{spec.time}`) of the scope where "
                f"`{spec.column}` is null in `data/` (some observed values were hidden for "
                "evaluation; real gaps are included)")
    if spec.kind == "held_out_entities":
        return (f"one row per {step} (`{spec.time}`) of the scope for each held-out `{entity_key}` "
                f"({', '.join(held or [])}), whose `{spec.column}` is withheld everywhere")
    return f"one row per `{entity_key}` of the scope"
