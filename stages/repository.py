"""Write, read and validate Parquet table folders: source tables and aligned repositories.

A folder holds one `<table>.parquet` per table and a `manifest.json` with, per table, its keys, row
count, column dtypes and units, and the SHA-256 of the file; plus the repository's metadata
(domain, sources, citation, license). Validation runs at write time: keys unique and sorted,
snake_case column names, a unit for every non-key column.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from stages.hashing import file_sha256, write_json
from stages.tables import Table

SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
MANIFEST = "manifest.json"


class RepositoryError(ValueError):
    """A table or folder breaks the repository contract; the message names table and problem."""


def validate_table(table: Table) -> None:
    """Check the contract for one table, raising RepositoryError on the first problem."""
    frame = table.frame
    for column in frame.columns:
        if not SNAKE_CASE.match(str(column)):
            raise RepositoryError(f"table {table.name}: column {column!r} is not snake_case")
    missing_keys = [k for k in table.keys if k not in frame.columns]
    if missing_keys:
        raise RepositoryError(f"table {table.name}: key columns {missing_keys} missing")
    no_unit = [c for c in frame.columns if c not in table.keys and c not in table.units]
    if no_unit:
        raise RepositoryError(f"table {table.name}: columns without a unit: {no_unit}")
    if table.keys and len(frame):
        keys = frame[list(table.keys)]
        if keys.isna().any().any():
            raise RepositoryError(f"table {table.name}: null values in key columns {table.keys}")
        duplicated = keys.duplicated()
        if duplicated.any():
            first = keys[duplicated].iloc[0].tolist()
            raise RepositoryError(f"table {table.name}: duplicated key {first}")
        order = keys.sort_values(list(table.keys)).index
        if not (order == frame.index).all():
            raise RepositoryError(f"table {table.name}: rows are not sorted by {table.keys}")


def sort_table(table: Table) -> Table:
    """Return the table sorted by its keys with a fresh RangeIndex."""
    frame = table.frame
    if table.keys:
        frame = frame.sort_values(list(table.keys), kind="stable")
    return Table(table.name, frame.reset_index(drop=True), table.keys, table.units)


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write a frame to Parquet deterministically (no index, zstd)."""
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(arrow, path, compression="zstd", write_statistics=True)


def write_tables(out_dir: Path, tables: list[Table], metadata: dict[str, Any]) -> dict:
    """Validate and write tables plus `manifest.json`; returns the manifest.

    The folder is emptied of stale `.parquet` files first so a removed table cannot linger.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("*.parquet"):
        stale.unlink()
    entries = {}
    for table in sorted(tables, key=lambda t: t.name):
        validate_table(table)
        path = out_dir / f"{table.name}.parquet"
        write_parquet(table.frame, path)
        entries[table.name] = {
            "file": path.name,
            "keys": list(table.keys),
            "rows": len(table.frame),
            "columns": {
                str(c): {"dtype": str(table.frame[c].dtype), "unit": table.units.get(c, "key")}
                for c in table.frame.columns
            },
            "sha256": file_sha256(path),
        }
    manifest = {**metadata, "tables": entries}
    write_json(out_dir / MANIFEST, manifest)
    return manifest


def read_manifest(folder: Path) -> dict:
    """Read a folder's manifest.json."""
    import json

    path = folder / MANIFEST
    if not path.exists():
        raise RepositoryError(f"{path}: missing manifest (was the stage that writes it run?)")
    return json.loads(path.read_text())


def read_table(folder: Path, name: str, columns: list[str] | None = None) -> pd.DataFrame:
    """Read one table of a folder, optionally only some columns."""
    path = folder / f"{name}.parquet"
    if not path.exists():
        raise RepositoryError(f"{path}: no table {name!r} in {folder}")
    return pq.read_table(path, columns=columns).to_pandas()


def verify_hashes(folder: Path) -> None:
    """Check every table file against the SHA-256 its manifest records."""
    for entry in read_manifest(folder)["tables"].values():
        actual = file_sha256(folder / entry["file"])
        if actual != entry["sha256"]:
            raise RepositoryError(f"{folder / entry['file']}: content hash differs from manifest")
