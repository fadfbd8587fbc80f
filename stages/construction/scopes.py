"""Scopes turn a task into a pool of queries: each scope names a slice of a domain's entities and years.

A scope resolves against an aligned repository's `entities` table into a concrete, sorted entity list
and a date range. The resolved scope is what the prompt's scope block shows the agent (and the
annotator script, which reads the same block).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date

import numpy as np
import pandas as pd

from stages.catalog_scopes import ScopeSpec

TIMELESS = date(1970, 1, 1)  # the span of a repository without a time axis (see `ResolvedScope.timeless`)


@dataclass(frozen=True)
class ResolvedScope:
    """A scope made concrete: which entities (sorted) and which dates, inclusive."""

    name: str
    kind: str
    description: str
    citation: str
    entity_key: str
    entities: tuple[str, ...]
    start: date
    end: date

    @property
    def timeless(self) -> bool:
        """Whether the repository has no time axis (molecules): the block then names no period."""
        return self.start == self.end == TIMELESS

    def block(self) -> dict:
        """The machine-readable part of the prompt's scope block."""
        period = {} if self.timeless else {"start": self.start.isoformat(), "end": self.end.isoformat()}
        return {"entity_key": self.entity_key, "entities": list(self.entities), **period}


class ScopeUnavailable(ValueError):
    """The scope cannot be drawn from this repository (too few entities or years)."""


def _filter(entities: pd.DataFrame, column: str, rule: object) -> pd.Series:
    if column not in entities.columns:
        raise ScopeUnavailable(f"entities have no column {column!r}")
    values = entities[column]
    if isinstance(rule, list):
        return values.isin(rule)
    if rule == {"missing": True}:
        return values.isna()
    if isinstance(rule, dict) and set(rule) <= {"min", "max"}:
        keep = values.notna()
        if "min" in rule:
            keep &= values >= rule["min"]
        if "max" in rule:
            keep &= values <= rule["max"]
        return keep
    raise ScopeUnavailable(f"unreadable entity rule for {column!r}: {rule!r}")


def _seeded_sample(chosen: list[str], size: int, seed: int) -> list[str]:
    """`size` of the sorted entities, drawn with numpy `default_rng(seed)`, sorted."""
    rng = np.random.default_rng(seed)
    return sorted(rng.choice(np.array(chosen), size=size, replace=False).tolist())


def resolve_scope(
    scope: ScopeSpec,
    entities: pd.DataFrame,
    entity_key: str,
    first_date: date,
    last_date: date,
    min_entities: int,
    min_years: int,
) -> ResolvedScope:
    """Resolve a scope against a repository's entities and its date span.

    A slice larger than the scope's bounds is bounded: a seeded sample of `max_entities` of its
    entities and its last `max_years` calendar years, said in the description. This keeps one
    query's cost the same at every profile; a larger profile gives more, and more varied, queries.

    Raises:
        ScopeUnavailable: with the reason, when the scope selects fewer than `min_entities`
            entities or fewer than `min_years` years of data.
    """
    bounded = []
    keep = pd.Series(True, index=entities.index)
    for column, rule in sorted(scope.entities.items()):
        keep &= _filter(entities, column, rule)
    chosen = sorted(entities.loc[keep, entity_key].astype(str))
    if scope.sample is not None:
        if len(chosen) < scope.sample:
            raise ScopeUnavailable(
                f"scope samples {scope.sample} entities but only {len(chosen)} are available"
            )
        chosen = _seeded_sample(chosen, scope.sample, scope.seed)
    if scope.max_entities is not None and len(chosen) > scope.max_entities:
        bounded.append(f"a seeded random sample of {scope.max_entities} of its {len(chosen)}")
        chosen = _seeded_sample(chosen, scope.max_entities, scope.seed)
    if len(chosen) < min_entities:
        raise ScopeUnavailable(f"scope selects {len(chosen)} entities, the task needs {min_entities}")
    start, end = first_date, last_date
    if scope.years is not None:
        start = max(start, date(scope.years[0], 1, 1))
        end = min(end, date(scope.years[1], 12, 31))
    if scope.period is not None:
        start, end = max(start, scope.period[0]), min(end, scope.period[1])
    if scope.max_years is not None and end.year - start.year + 1 > scope.max_years:
        bounded.append(f"its last {scope.max_years} calendar years")
        start = max(start, date(end.year - scope.max_years + 1, 1, 1))
    years = (end - start).days / 365.25 if end >= start else 0.0
    if years + 1e-9 < min_years - 0.01:
        raise ScopeUnavailable(f"scope covers {years:.2f} years of data, the task needs {min_years}")
    return ResolvedScope(
        name=scope.name,
        kind=scope.kind,
        description="; ".join([scope.description, *bounded]),
        citation=scope.citation,
        entity_key=entity_key,
        entities=tuple(chosen),
        start=start,
        end=end,
    )


def render_scope_block(scope: ResolvedScope) -> str:
    """Render the prompt's scope block: the description, then the JSON an agent can parse.

    `stages.catalog_scopes.read_prompt_block` reads it back (its `BLOCK` matches this layout).
    """
    period = "" if scope.timeless else f", {scope.start.isoformat()} to {scope.end.isoformat()}"
    return (
        f"## Scope\n\n{scope.description} ({len(scope.entities)} {scope.entity_key} values{period}).\n\n"
        f"```json\n{json.dumps(scope.block(), sort_keys=True)}\n```\n"
    )
