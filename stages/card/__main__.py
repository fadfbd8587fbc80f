"""DVC entry point `card`: assemble processed/release/ and write its Croissant file and datasheet.

The release holds only public files: `queries.parquet` and, per query, the files of its public
folder (hard links when possible) under `workspaces/<query_id>/`. Private folders (gold, truth,
annotators, task sources) are never read for it. `croissant.json` is validated by mlcroissant
before the stage succeeds; its warnings (e.g. no license chosen yet) are printed.
"""

from __future__ import annotations

import logging
import shutil
import sys
from importlib import metadata
from pathlib import Path

import pandas as pd

from stages.card.croissant import CardError, croissant, write_validated
from stages.card.datasheet import datasheet
from stages.card.facts import read_facts
from stages.layout import BENCHMARK, RELEASE, REPORTS, REPOSITORIES, task_dir
from stages.params import load_params
from stages.sandbox.workspace import link_file, link_tree


def assemble(benchmark: Path, release: Path) -> int:
    """Fill `release` with queries.parquet and each query's public files; return the file count."""
    if release.exists():
        shutil.rmtree(release)
    release.mkdir(parents=True)
    link_file(benchmark / "queries.parquet", release / "queries.parquet")
    queries = pd.read_parquet(benchmark / "queries.parquet", columns=["query_id", "task_id"])
    files = 1
    for query_id, task_id in queries.itertuples(index=False):
        public = task_dir(benchmark, task_id) / "public" / query_id
        files += link_tree(public, release / "workspaces" / query_id)
    return files


def main() -> None:
    """Assemble the release, then write and validate its card."""
    logging.getLogger("absl").setLevel(logging.ERROR)  # mlcroissant logs its warnings; they are printed below
    params = load_params()
    card = params.card.model_dump()
    card["version"] = card["version"] or metadata.version("scibench")
    files = assemble(BENCHMARK, RELEASE)
    facts = read_facts(BENCHMARK, REPOSITORIES, REPORTS / "validity.json", params.profile)
    try:
        warnings = write_validated(croissant(facts, card, RELEASE), RELEASE / "croissant.json")
    except CardError as error:
        sys.exit(f"card: {error}")
    (RELEASE / "DATASHEET.md").write_text(datasheet(facts, card))
    print(f"card: {RELEASE}: {files} data files, croissant.json and DATASHEET.md ({facts.benchmark_id})")
    for warning in warnings:
        print(f"card: croissant warning: {warning}")


if __name__ == "__main__":
    main()
