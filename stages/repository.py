"""Write, read and validate Parquet table folders: source tables and aligned repositories.

A folder holds one `<table>.parquet` per table and a `manifest.json` with, per table, its keys, row
count, column dtypes and units, the SHA-256 of the file and, when it has any, its `notes` (sentences
about its values: why a column is null for some rows, what a join left out); plus the repository's metadata
(domain, sources, citation, license). Validation runs at write time: keys unique and sorted,
snake_case column names, a unit for every non-key column. Large tables arrive as `StreamedTables`:
key-sorted Arrow batches, each checked (also against the last key of the batch before) and written
as its own row group, so no whole-table frame is held. The next batch is produced on a thread of
its own while this one is encoded (`in_background`, one batch ahead): readers stay plain generators,
and parsing overlaps Parquet encoding, which is single-threaded (`make bench` size on 2 cores,
medians of 3: FLUXNET-CH4 40 sites 13.4 s without the overlap and 10.8 s with it, peak RSS 753 and
873 MB; CAMELS-US ingest and align 5.8 s and 4.7 s).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from stages.hashing import file_sha256, write_json
from stages.prefetch import in_background
from stages.tables import StreamedTables, Table, TableStream

SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
MANIFEST = "manifest.json"
PARQUET_OPTIONS = {"compression": "zstd", "write_statistics": True}


def parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """Writer options: zstd, statistics, dictionary encoding for text columns only.

    Measurement values (floats above all) rarely repeat: dictionary-encoding them costs about as
    much time as the compression and gives a larger file than plain values under zstd
    (FLUXNET-CH4 half-hourly, 57 columns: 1.7x the encoding time, 1.12x the bytes).
    """
    text = [field.name for field in schema
            if pa.types.is_string(field.type) or pa.types.is_large_string(field.type)
            or pa.types.is_dictionary(field.type)]
    return PARQUET_OPTIONS | {"use_dictionary": text}


class RepositoryError(ValueError):
    """A table or folder breaks the repository contract; the message names table and problem."""


@dataclass(frozen=True)
class CopiedTable:
    """A table of another folder taken over unchanged, under `name`: its file is copied, not re-encoded.

    It was validated when that folder was written; the copy is checked against the hash recorded then.
    """

    name: str
    folder: Path
    table: str


class SourceTables(Mapping):
    """The tables of a written folder, each read into a frame on first use; `.manifest` is its manifest."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.manifest = read_manifest(folder)
        self._frames: dict[str, pd.DataFrame] = {}

    def __getitem__(self, name: str):
        if name not in self._frames:
            self._entry(name)
            self._frames[name] = read_table(self.folder, name)
        return self._frames[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.manifest["tables"])

    def __len__(self) -> int:
        return len(self.manifest["tables"])

    def path(self, name: str) -> Path:
        """The table's Parquet file, for readers that go through it row group by row group."""
        return self.folder / self._entry(name)["file"]

    def columns(self, name: str, columns: list[str]) -> pd.DataFrame:
        """Some columns of a table, read without loading the rest."""
        return read_table(self.folder, name, columns)

    def copy(self, name: str, as_name: str | None = None) -> CopiedTable:
        """The table, to be written unchanged into another folder (as `as_name`)."""
        self._entry(name)
        return CopiedTable(as_name or name, self.folder, name)

    def _entry(self, name: str) -> dict:
        if name not in self.manifest["tables"]:
            raise KeyError(f"{self.folder}: no table {name!r}")
        return self.manifest["tables"][name]


def validate_table(table: Table) -> None:
    """Check the contract for one whole table, raising RepositoryError on the first problem."""
    item = _streamed(table)
    stream = item.streams[0]
    validate_columns(stream.name, [str(c) for c in stream.template.columns], stream.keys, stream.units)
    for chunk in item.chunks:
        check_key_order(stream.name, chunk[stream.name], stream.keys, None)


def validate_columns(name: str, columns: list[str], keys: tuple[str, ...], units: dict[str, str]) -> None:
    """Column names snake_case, key columns present, a unit for every other column."""
    for column in columns:
        if not SNAKE_CASE.match(str(column)):
            raise RepositoryError(f"table {name}: column {column!r} is not snake_case")
    missing_keys = [k for k in keys if k not in columns]
    if missing_keys:
        raise RepositoryError(f"table {name}: key columns {missing_keys} missing")
    no_unit = [c for c in columns if c not in keys and c not in units]
    if no_unit:
        raise RepositoryError(f"table {name}: columns without a unit: {no_unit}")


def check_key_order(name: str, batch: pa.Table, keys: tuple[str, ...], before: pa.Table | None) -> None:
    """Keys non-null and strictly increasing within `batch` and after `before` (the previous last row)."""
    if not keys or not batch.num_rows:
        return
    rows = batch.select(list(keys))
    if any(rows.column(k).null_count for k in keys):
        raise RepositoryError(f"table {name}: null values in key columns {keys}")
    if before is not None:
        rows = pa.concat_tables([before.select(list(keys)), rows])
    if rows.num_rows < 2:
        return
    increasing, tied = None, None  # row i < row i+1 so far; rows i and i+1 equal so far
    for key in keys:
        left, right = rows.column(key).slice(0, rows.num_rows - 1), rows.column(key).slice(1)
        less, equal = pc.less(left, right), pc.equal(left, right)
        increasing = less if increasing is None else pc.or_(increasing, pc.and_(tied, less))
        tied = equal if tied is None else pc.and_(tied, equal)
    if pc.all(increasing).as_py():
        return
    row = pc.index(increasing, False).as_py()
    if tied[row].as_py():
        first = [rows.column(k)[row + 1].as_py() for k in keys]
        raise RepositoryError(f"table {name}: duplicated key {first}")
    raise RepositoryError(f"table {name}: rows are not sorted by {keys}")


def sort_table(table: Table) -> Table:
    """Return the table sorted by its keys with a fresh RangeIndex."""
    frame = table.frame
    if table.keys:
        frame = frame.sort_values(list(table.keys), kind="stable")
    return Table(table.name, frame.reset_index(drop=True), table.keys, table.units, table.notes)


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write a frame to Parquet deterministically (no index, zstd)."""
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(arrow, path, **parquet_options(arrow.schema))


def write_tables(out_dir: Path, tables: Iterable[Table | StreamedTables | CopiedTable],
                 metadata: dict[str, Any]) -> dict:
    """Validate and write tables plus `manifest.json`; returns the manifest.

    Items are taken one at a time, in the order given, so a reader may yield streams whose batches
    are produced while they are written (and tables it can only build afterwards). The folder is
    emptied of stale `.parquet` files and its manifest first, so a removed table cannot linger and a
    failed write leaves no manifest; a table that fails validation leaves no file behind.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in [*out_dir.glob("*.parquet*"), out_dir / MANIFEST]:
        stale.unlink(missing_ok=True)  # a failed write must not leave an old manifest beside new files
    entries = {}
    for item in tables:
        if isinstance(item, CopiedTable):
            entries[item.name] = _copy(out_dir, item)
        else:
            entries |= _write_streams(out_dir, _streamed(item) if isinstance(item, Table) else item)
    manifest = {**metadata, "tables": entries}
    write_json(out_dir / MANIFEST, manifest)
    return manifest


def _write_streams(out_dir: Path, item: StreamedTables) -> dict[str, dict]:
    """Write every stream of `item` to `<name>.parquet`, a row group per batch; their manifest entries."""
    schemas = {s.name: pa.Schema.from_pandas(s.template, preserve_index=False) for s in item.streams}
    partials = {name: out_dir / f"{name}.parquet.partial" for name in schemas}
    rows, last = dict.fromkeys(schemas, 0), dict.fromkeys(schemas)
    for stream in item.streams:
        validate_columns(stream.name, [str(c) for c in stream.template.columns], stream.keys, stream.units)
    writers = {name: pq.ParquetWriter(partials[name], schema, **parquet_options(schema))
               for name, schema in schemas.items()}
    try:
        for chunk in in_background(item.chunks, ahead=1):
            for stream in item.streams:
                batch = chunk[stream.name].select(schemas[stream.name].names).cast(schemas[stream.name])
                check_key_order(stream.name, batch, stream.keys, last[stream.name])
                if batch.num_rows:
                    last[stream.name] = batch.select(list(stream.keys)).take([batch.num_rows - 1])  # a copy
                    writers[stream.name].write_table(batch)
                    rows[stream.name] += batch.num_rows
        for writer in writers.values():
            writer.close()
    except BaseException:
        for name, writer in writers.items():
            writer.close()
            partials[name].unlink(missing_ok=True)
        raise
    entries = {}
    for stream in item.streams:
        path = partials[stream.name].with_suffix("")
        partials[stream.name].replace(path)
        entries[stream.name] = {
            "file": path.name,
            "keys": list(stream.keys),
            "rows": rows[stream.name],
            "columns": {
                str(c): {"dtype": str(stream.template[c].dtype), "unit": stream.units.get(c, "key")}
                for c in stream.template.columns
            },
            "sha256": file_sha256(path),
        } | ({"notes": list(stream.notes)} if stream.notes else {})  # absent without notes: older manifests read alike
    return entries


def _copy(out_dir: Path, item: CopiedTable) -> dict:
    entry = dict(read_manifest(item.folder)["tables"][item.table])
    path = out_dir / f"{item.name}.parquet"
    try:  # a hard link: both folders only ever replace whole files, so neither can change the other's
        os.link(item.folder / entry["file"], path)
    except OSError:  # another filesystem, or one without links
        shutil.copyfile(item.folder / entry["file"], path)
    if file_sha256(path) != entry["sha256"]:
        path.unlink()
        raise RepositoryError(f"{item.folder / entry['file']}: content hash differs from manifest")
    return entry | {"file": path.name}


def _streamed(table: Table) -> StreamedTables:
    """A whole table as a stream of one batch."""
    template = table.frame.iloc[:0]
    schema = pa.Schema.from_pandas(template, preserve_index=False)
    batch = pa.Table.from_pandas(table.frame, schema=schema, preserve_index=False)
    return StreamedTables((TableStream(table.name, template, table.keys, table.units, table.notes),),
                          [{table.name: batch}])


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
