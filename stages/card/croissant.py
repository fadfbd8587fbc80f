"""The release's Croissant file (MLCommons Croissant 1.0 with its Responsible-AI fields).

NeurIPS' Evaluations and Datasets track asks every dataset submission for a Croissant file with
the core and the minimal RAI fields. This one is built with `mlcroissant` (the format's reference
library), so its JSON-LD is the library's own serialisation, and validated by loading it back:
an error fails the stage. It describes the release folder it sits in:
- `queries.parquet` (a FileObject with its SHA-256) and its record set `queries` (id, task, scope,
  scope kind, entity count, period, split and prompt of every query);
- `workspaces/<query_id>/`: the files an agent gets in `data/` for that query (FileSets of the
  Parquet tables and of the README that describes them).
The RAI fields are written from the build's facts (how the values were made, what construction
discarded and why, the validity gates); the license, creators and URL come from `params.yaml`
(`card`), since only the benchmark's publisher can choose them.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

import mlcroissant as mlc

from stages.card.facts import Facts
from stages.card.text import rai_text
from stages.hashing import file_sha256

PARQUET, MARKDOWN = "application/x-parquet", "text/markdown"
# The columns of queries.parquet and their Croissant types, in file order.
QUERY_FIELDS = (("query_id", "TEXT", "content hash of the task and its resolved scope"),
                ("task_id", "TEXT", "the task the query instantiates"),
                ("task_hash", "TEXT", "content hash of the task's definition"),
                ("scope", "TEXT", "the named slice of the data the query covers"),
                ("scope_kind", "TEXT", "geographic, attribute, temporal or sample_size"),
                ("n_entities", "INTEGER", "entities (basins, counties, sites, series) in scope"),
                ("start", "DATE", "first day of the scope's period"),
                ("end", "DATE", "last day of the scope's period"),
                ("split", "TEXT", "train, val or test"),
                ("prompt", "TEXT", "what the agent reads: objective, scope block, artifact and answer format"))


class CardError(RuntimeError):
    """The Croissant file does not validate; the message lists the library's errors."""


def _query_fields() -> list:
    return [mlc.Field(id=f"queries/{name}", name=name, description=description,
                      data_types=[getattr(mlc.DataType, kind)],
                      source=mlc.Source(file_object="queries.parquet", extract=mlc.Extract(column=name)))
            for name, kind, description in QUERY_FIELDS]


def _datetime(day: date | None) -> datetime | None:
    return None if day is None else datetime(day.year, day.month, day.day)


def croissant(facts: Facts, card: dict, release: Path) -> dict:
    """The JSON-LD of the release folder `release` (which must hold queries.parquet)."""
    base = card.get("base_url") or ""
    rai = rai_text(facts)
    distribution = [
        mlc.FileObject(id="queries.parquet", name="queries.parquet", content_url=f"{base}queries.parquet",
                       encoding_formats=[PARQUET], sha256=file_sha256(release / "queries.parquet"),
                       description="every query of the benchmark: prompt, scope and split"),
        mlc.FileSet(id="workspace-tables", name="workspace-tables", encoding_formats=[PARQUET],
                    includes=["workspaces/*/*.parquet"],
                    description="per query, the tables an agent finds in data/ (its scope's rows only)"),
        mlc.FileSet(id="workspace-readmes", name="workspace-readmes", encoding_formats=[MARKDOWN],
                    includes=["workspaces/*/README.md"],
                    description="per query, data/README.md: what each table holds"),
    ]
    queries = mlc.RecordSet(id="queries", name="queries", key="queries/query_id", fields=_query_fields(),
                            description="one record per query")
    metadata = mlc.Metadata(
        name=card["name"], description=card["description"], url=card.get("url"),
        license=[card["license"]] if card.get("license") else None, version=card["version"],
        date_published=_datetime(card.get("date_published")), cite_as=card.get("cite_as"),
        creators=[mlc.Person(name=c["name"], url=c.get("url")) for c in card.get("creators", [])],
        keywords=["benchmark", "AI agents", "scientific data analysis", "hydrology", "agriculture",
                  "methane fluxes", facts.benchmark_id],
        distribution=distribution, record_sets=[queries], **rai)
    return metadata.to_json()


def write_validated(document: dict, path: Path) -> list[str]:
    """Write the JSON-LD to `path`, load it back with mlcroissant; return its warnings, raise on errors."""
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    try:
        dataset = mlc.Dataset(jsonld=path)
    except mlc.ValidationError as error:
        raise CardError(f"{path}: not a valid Croissant file: {error}") from error
    return sorted(dataset.metadata.ctx.issues.warnings)
