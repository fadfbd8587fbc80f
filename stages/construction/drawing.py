"""The four construction stages as plain functions (MoSciBench): extract, align, formalize & label, verify.

Here: extracting a task's tables, drawing its queries from its scopes (with near-duplicates
dropped) and the query records. Staging a query's files is `stages/construction/staging.py`, labelling and
verifying `stages/construction/annotate.py`, splitting and writing the benchmark `stages/construction/splits.py` and
`stages/construction/benchmark.py`. `flows/construct.py` orchestrates them with Prefect; everything here is
testable without it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pandas as pd

from stages.catalog import CatalogTask
from stages.catalog_scopes import ScopeSpec
from stages.construction import splits
from stages.construction.prompts import render_prompt
from stages.construction.scopes import TIMELESS, ScopeUnavailable, resolve_scope
from stages.construction.splits import PoolQuery
from stages.repository import read_manifest, read_table
from stages.tables import Table


@dataclass(frozen=True)
class Query:
    """One scoped query of a task. `query_id` is the hash of the task hash and the resolved scope."""

    query_id: str
    task_id: str
    task_hash: str
    scope: str
    scope_kind: str
    scope_citation: str
    n_entities: int
    start: date
    end: date
    prompt: str
    entities: tuple[str, ...] = ()


@dataclass(frozen=True)
class Discard:
    """A scope or query left out of the benchmark, with the stage that left it out and why."""

    task_id: str
    scope: str
    stage: str
    reason: str
    query_id: str | None = None


def extract_tables(task: CatalogTask, repository_dir: Path) -> list[Table]:
    """Stage 1, extract: the repository tables and columns the task's data spec names, with their notes.

    A table's notes (its manifest entry's `notes`: why some values are null, which rows a join left
    out) go with it into the public README, so a query never loses rows or values silently.
    """
    manifest = read_manifest(repository_dir)
    tables = []
    for name, columns in sorted(task.spec.data.tables.items()):
        entry = manifest["tables"].get(name)
        if entry is None:
            raise KeyError(f"task {task.spec.id}: repository has no table {name!r}")
        unknown = sorted(set(columns) - set(entry["columns"]))
        if unknown:
            raise KeyError(f"task {task.spec.id}: table {name!r} has no columns {unknown}")
        units = {c: entry["columns"][c]["unit"] for c in columns if entry["columns"][c]["unit"] != "key"}
        keys = tuple(k for k in entry["keys"] if k in columns)
        tables.append(Table(name, read_table(repository_dir, name, columns), keys, units,
                            tuple(entry.get("notes", ()))))
    return tables


def data_readme(task_id: str, tables: list[Table]) -> str:
    """The public data README: tables, keys, columns, units and notes; no citation, no answer."""
    lines = [f"# Data for {task_id}", ""]
    for table in tables:
        lines += [f"## {table.name}.parquet", "", f"{len(table.frame)} rows; key: "
                  f"{', '.join(table.keys) or '(none)'}", "", "| column | dtype | unit |",
                  "|---|---|---|"]
        lines += [f"| {c} | {table.frame[c].dtype} | {table.units.get(c, 'key')} |"
                  for c in table.frame.columns]
        lines += ["", *(f"Note: {note}" for note in table.notes)] if table.notes else []
        lines.append("")
    return "\n".join(lines)


def repository_span(repository_dir: Path) -> tuple[date, date]:
    """The first and last day of the repository's `timeseries` table, or `TIMELESS` twice without one."""
    if "timeseries" not in read_manifest(repository_dir)["tables"]:
        return TIMELESS, TIMELESS
    dates = read_table(repository_dir, "timeseries", ["date"])["date"]
    return dates.min(), dates.max()


def draw_queries(
    task: CatalogTask,
    scopes: dict[str, ScopeSpec],
    entities: pd.DataFrame,
    entity_key: str,
    span: tuple[date, date],
    limit: int,
) -> tuple[list[Query], list[Discard]]:
    """Stage 3a, formalize: resolve the task's scopes into at most `limit` rendered queries."""
    queries, discards, seen = [], [], {}
    for name in task.spec.scopes:
        try:
            resolved = resolve_scope(scopes[name], entities, entity_key, span[0], span[1],
                                     task.spec.min_entities, task.spec.min_years)
        except ScopeUnavailable as error:
            discards.append(Discard(task.spec.id, name, "formalize", str(error)))
            continue
        query_id = task.query_id(resolved.block())
        if query_id in seen:
            discards.append(Discard(task.spec.id, name, "formalize",
                                    f"same entities and period as scope {seen[query_id]!r}"))
            continue
        seen[query_id] = name
        if len(queries) == limit:
            discards.append(Discard(task.spec.id, name, "formalize",
                                    f"query pool is full ({limit} queries per task)"))
            continue
        queries.append(Query(query_id, task.spec.id, task.task_hash, name, resolved.kind,
                             resolved.citation, len(resolved.entities), resolved.start,
                             resolved.end, render_prompt(task.spec, resolved, query_id),
                             resolved.entities))
    return queries, discards


def answers_agree(first: dict, second: dict, rel_tol: float) -> bool:
    """Whether two annotator answers agree: same keys, numbers within `rel_tol`, the rest equal."""
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(
            answers_agree(first[k], second[k], rel_tol) for k in first)
    if isinstance(first, list) and isinstance(second, list):
        return len(first) == len(second) and all(
            answers_agree(a, b, rel_tol) for a, b in zip(first, second, strict=True))
    if isinstance(first, bool) or isinstance(second, bool):
        return first is second
    if isinstance(first, int | float) and isinstance(second, int | float):
        return abs(first - second) <= rel_tol * max(abs(first), abs(second), 1e-12)
    return first == second


def pool_query(query: Query) -> PoolQuery:
    """The part of a query that splitting and de-duplication look at."""
    return PoolQuery(query.query_id, query.scope, query.scope_kind, query.entities, query.start,
                     query.end)


def drop_near_duplicates(queries: list[Query], max_jaccard: float) -> tuple[list[Query], list[Discard]]:
    """Discard each query whose entity-day Jaccard index with an earlier kept one is above the bound."""
    by_id = {q.query_id: q for q in queries}
    kept, dropped = splits.drop_near_duplicates([pool_query(q) for q in queries], max_jaccard)
    discards = [
        Discard(by_id[d.query_id].task_id, d.scope, "formalize",
                f"near-duplicate of scope {other.scope!r}: entity-day Jaccard {jaccard:.2f} > "
                f"{max_jaccard}", d.query_id)
        for d, other, jaccard in dropped
    ]
    return [by_id[q.query_id] for q in kept], discards


def queries_frame(queries: list[Query], splits: dict[str, str]) -> pd.DataFrame:
    """The public query table (no citation, no gold) with each query's split."""
    rows = [
        {"query_id": q.query_id, "task_id": q.task_id, "task_hash": q.task_hash, "scope": q.scope,
         "scope_kind": q.scope_kind, "n_entities": q.n_entities, "start": q.start, "end": q.end,
         "split": splits[q.query_id], "prompt": q.prompt}
        for q in sorted(queries, key=lambda q: (q.task_id, q.query_id))
    ]
    return pd.DataFrame(rows)


def write_private_queries(private_dir: Path, queries: list[Query], labels: dict) -> None:
    """Write a task's gold answers, tolerances and scope citations (never staged for an agent)."""
    records = {q.query_id: {"scope": q.scope, "scope_citation": q.scope_citation,
                            "gold": labels[q.query_id].gold,
                            "reported": labels[q.query_id].reported,
                            "tolerance": labels[q.query_id].tolerance,
                            "bootstrap_sd": labels[q.query_id].bootstrap_sd,
                            "checkpoints": labels[q.query_id].checkpoints} for q in queries}
    (private_dir / "queries.json").write_text(json.dumps(records, sort_keys=True, indent=2) + "\n")
