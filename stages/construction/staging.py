"""Stage one query: only its scope's entities and days in public files, its hidden truth in private.

Layout under a built task (`stages.layout.task_dir`)::

    public/<query_id>/    the query's Parquet tables, native files (a multimodal task's NetCDF grid,
                          GeoTIFF layers; `stages.construction.native`) + README.md (read-only;
                          what a workspace links)
    private/<query_id>/   truth.parquet, required.parquet (rows the artifact owes), references.json
    private/annotator/    reproduce.py + the domain's annotator library
    private/task.yaml

A query sees nothing outside its scope (no other entity, no day after its end) and, for a task with
a truth, not the evaluation target (see `stages.scoring.query.truth`). Reference models are graded here,
on the scorer side, against the truth.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pandas as pd

from stages.catalog import CatalogTask
from stages.catalog_scopes import read_prompt_block
from stages.construction.drawing import Discard, Query, data_readme
from stages.construction.native import stage_native
from stages.hashing import write_json
from stages.layout import REPOSITORIES
from stages.repository import write_parquet, write_tables
from stages.scoring.query.references import grade_references
from stages.scoring.query.truth import TIMESTAMP_COLUMNS, YEAR_COLUMNS, instants, withhold
from stages.tables import Table


def scoped_tables(tables: list[Table], key: str, query: Query) -> list[Table]:
    """The task's tables cut to the query's entities and period (inclusive) by their time columns.

    Time columns are dates, timestamps (every instant of the last day kept) and whole years.
    """
    out = []
    for table in tables:
        frame = table.frame
        if key in frame.columns:
            frame = frame[frame[key].astype(str).isin(query.entities)]
        for column in frame.columns.intersection(["date", *TIMESTAMP_COLUMNS]):
            times = instants(frame[column])
            frame = frame[(times >= pd.Timestamp(query.start))
                          & (times < pd.Timestamp(query.end) + pd.Timedelta(days=1))]
        for column in frame.columns.intersection(list(YEAR_COLUMNS)):
            frame = frame[frame[column].between(query.start.year, query.end.year)]
        out.append(replace(table, frame=frame.reset_index(drop=True)))
    return out


def stage_task(task: CatalogTask, task_dir: Path) -> None:
    """Empty the task's folder and copy its private annotator files and spec."""
    shutil.rmtree(task_dir, ignore_errors=True)
    annotator = task_dir / "private" / "annotator"
    annotator.mkdir(parents=True)
    shutil.copyfile(task.reproduce, annotator / "reproduce.py")
    for module in task.annotator_lib:
        shutil.copyfile(module, annotator / module.name)
    shutil.copyfile(task.folder / "task.yaml", task_dir / "private" / "task.yaml")
    (task_dir / "public").mkdir()


def _readme(task: CatalogTask, tables: list[Table], note: str, native: list[str]) -> str:
    text = data_readme(task.spec.id, tables) + (f"\n{note}\n" if note else "")
    if native:
        text += "\n## Files in their own formats\n\n" + "\n".join(native) + "\n"
    return text


def _read_only(folder: Path) -> None:
    """Make the files read-only.

    Folders stay writable so the build can replace them (the sandbox mounts `data/` read-only
    whatever its modes).
    """
    for path in folder.rglob("*"):
        if path.is_file():
            path.chmod(0o444)


def stage_query(task: CatalogTask, tables: list[Table], key: str, query: Query, task_dir: Path,
                repository: Path | None = None) -> Path:
    """Write the query's public files and its private truth; returns the public folder.

    `repository` (the task's by default) holds the native files a multimodal task stages apart.
    """
    public, private = task_dir / "public" / query.query_id, task_dir / "private" / query.query_id
    shutil.rmtree(public, ignore_errors=True)
    private.mkdir(parents=True, exist_ok=True)
    scoped = scoped_tables(tables, key, query)
    note = ""
    spec = task.spec
    if spec.truth is not None:
        withheld = withhold(spec.truth, {t.name: t.frame for t in scoped}, key, query.start,
                            query.end, query.query_id, list(query.entities))
        scoped = [replace(t, frame=withheld.tables[t.name]) for t in scoped]
        write_parquet(withheld.truth, private / "truth.parquet")
        write_parquet(withheld.required, private / "required.parquet")
        if spec.truth.kind in ("holdout", "hidden_gaps", "held_out_entities"):
            note = (f"`{spec.truth.column}` is null where it is withheld for evaluation (see the "
                    "prompt's artifact block) and where it was never observed.")
        artifact_block = read_prompt_block(query.prompt, "Artifact")
        scope = {"entity_key": key, "entities": list(query.entities),
                 "start": query.start.isoformat(), "end": query.end.isoformat()}
        references = grade_references(spec, withheld.tables, scope, artifact_block,
                                      withheld.required, withheld.truth)
        write_json(private / "references.json", references)
    write_tables(public, scoped, {"kind": "public", "task": spec.id})
    (public / "manifest.json").unlink()
    native = stage_native(spec.data.native, repository or REPOSITORIES / spec.data.repository, key,
                          list(query.entities), query.start, query.end, public)
    (public / "README.md").write_text(_readme(task, scoped, note, native))
    _read_only(public)
    return public


def stage_or_discard(task: CatalogTask, tables: list[Table], key: str, query: Query, task_dir: Path,
                     repository: Path | None = None) -> Discard | None:
    """Stage the query (`stage_query`); None, or its discard when its data cannot be staged.

    A query whose truth or reference models cannot be formed on its data (e.g. a site that never
    measured the target in the scope's window) is discarded with the reason, and its folders
    removed, instead of stopping the build.
    """
    try:
        stage_query(task, tables, key, query, task_dir, repository)
    except Exception as error:  # noqa: BLE001 - any failure on one query's data is that query's
        for side in ("public", "private"):
            shutil.rmtree(task_dir / side / query.query_id, ignore_errors=True)
        return Discard(query.task_id, query.scope, "align", f"{type(error).__name__}: {error}", query.query_id)
    return None


def stage_queries(task: CatalogTask, tables: list[Table], key: str, queries: list[Query],
                  task_dir: Path, repository: Path | None = None) -> tuple[list[Query], list[Discard]]:
    """Stage every query (`stage_or_discard`); return the staged ones and the discards."""
    outcomes = [(query, stage_or_discard(task, tables, key, query, task_dir, repository)) for query in queries]
    return [q for q, discard in outcomes if discard is None], [d for _, d in outcomes if d is not None]
