"""What the dataset card states, read from the build: nothing in it is typed by hand.

- the catalog counts (`catalog_summary`: tasks by domain, category, difficulty and tag; queries by
  split and scope kind) and the validity verdict, from `processed/reports/validity.json`;
- what construction kept and discarded, per task and stage, from the verification report;
- where each repository's values came from (real files or a seeded generator), their license and
  the data product a synthetic source stands in for, from each repository's manifest.

Only aggregates and public facts are read: no gold, no task citation, no private path.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

POOL_FULL = "query pool is full"  # a scope left unused because its task had enough queries: not a discard
LOW_KEEP = 0.5  # a task that kept less than this share of its drawn queries is named in the card


@dataclass(frozen=True)
class Source:
    """One raw source of a repository, as its manifest records it."""

    name: str
    origin: str  # "synthetic" or "real"
    license: str | None
    citation: str | None  # the real data product read (None for a synthetic source)
    stands_in_for: str | None  # the data product a synthetic source imitates
    generator: str | None
    seed: int | None
    params: dict


@dataclass(frozen=True)
class Facts:
    """Everything the card says, each figure computed from the build."""

    benchmark_id: str
    profile: str
    catalog: dict  # catalog_summary of the built benchmark
    queries_drawn: int
    queries_verified: int
    discards_by_stage: dict[str, int]
    low_keep: list[tuple[str, int, int]]  # (task, verified, drawn) for tasks below LOW_KEEP
    sources: dict[str, list[Source]]  # by domain
    entities: dict[str, int]  # entities per repository
    validity_passed: bool
    gates: dict[str, float]
    overall: dict[str, float]  # each agent's overall score on the evaluated split


def _sources(manifest: dict) -> list[Source]:
    out = []
    for name, source in sorted(manifest["sources"].items()):
        provenance = source.get("provenance") or {}
        out.append(Source(name=name, origin=provenance.get("origin", "unknown"), license=source.get("license"),
                          citation=source.get("citation"), stands_in_for=source.get("stands_in_for"),
                          generator=provenance.get("generator"), seed=provenance.get("seed"),
                          params=provenance.get("params") or {}))
    return out


def _entities(repository: Path, entity_key: str) -> int:
    table = repository / "entities.parquet"
    return int(pd.read_parquet(table, columns=[entity_key])[entity_key].nunique()) if table.exists() else 0


def read_facts(benchmark: Path, repositories: Path, validity_report: Path, profile: str) -> Facts:
    """Collect the card's facts from a built benchmark, its repositories and the validity report."""
    bench = json.loads((benchmark / "benchmark.json").read_text())
    verification = json.loads((benchmark / "verification.json").read_text())
    validity = json.loads(validity_report.read_text())
    discards: Counter = Counter()
    low_keep = []
    for task_id, entry in sorted(verification["tasks"].items()):
        discards.update(d["stage"] for d in entry["discarded"] if not d["reason"].startswith(POOL_FULL))
        drawn, kept = entry["queries_drawn"], entry["queries_verified"]
        if drawn and kept / drawn < LOW_KEEP:
            low_keep.append((task_id, kept, drawn))
    sources, entities = {}, {}
    for domain in sorted(bench["data"]):
        manifest = json.loads((repositories / domain / "manifest.json").read_text())
        sources[domain] = _sources(manifest)
        entities[domain] = _entities(repositories / domain, manifest["entity_key"])
    return Facts(benchmark_id=bench["benchmark_id"], profile=profile, catalog=validity["catalog"],
                 queries_drawn=verification["queries_drawn"], queries_verified=verification["queries_verified"],
                 discards_by_stage=dict(sorted(discards.items())), low_keep=low_keep, sources=sources,
                 entities=entities, validity_passed=bool(validity["passed"]), gates=validity["gates"],
                 overall=validity["overall"])
