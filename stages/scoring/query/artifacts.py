"""Read an agent's artifact (a Parquet file it left in `work/`) as untrusted input.

The bytes were collected by the sandbox with a size cap. Before any data page is decoded, the
footer is checked: row count, declared uncompressed size, the declared columns. Then only the
declared columns are read and normalised (entity key as text, dates as days, values as float or
int). What a file declares does not bound what decoding it costs (a dictionary bomb, a page
header that lies), so `read_artifact` parses in a forked child under a memory bound and takes
back only the required rows (`stages.scoring.query.confined`). Every problem, including whatever
pyarrow raises on a hostile file and a child past its bound, becomes an `ArtifactError` naming the
file and the problem; it is scored as an unparseable answer, never a crash of the harness.

Rows: the artifact must hold every required row (see `stages.scoring.query.truth`) exactly once, with a
finite value in every value column; rows beyond the required ones are ignored (and counted).
"""

from __future__ import annotations

import io
from functools import partial

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from stages.catalog import ArtifactSpec
from stages.scoring.query.confined import BOUNDS, Bounds, read_confined
from stages.scoring.query.truth import TIMESTAMP_COLUMNS, YEAR_COLUMNS, instants

MAX_UNCOMPRESSED_BYTES = 512 << 20
EXTRA_ROWS_ALLOWED = 1_000_000
MAX_EXACT_INTEGER = 2**53


class ArtifactError(ValueError):
    """The artifact cannot be graded; the message says why (scored as unparseable)."""


def untrusted_parquet(data: bytes, name: str, columns: list[str], max_rows: int) -> pq.ParquetFile:
    """Open an agent's Parquet bytes after checking its footer: rows, declared size, columns.

    Nothing is decoded before the checks pass; every problem is an `ArtifactError` naming `name`.
    The file is opened for single-threaded reads (no pre-buffering on the I/O pool): it is read in
    a forked child (`stages.scoring.query.confined`), where the parent's pool threads do not exist.
    """
    try:
        parquet = pq.ParquetFile(io.BytesIO(data), pre_buffer=False)
        metadata = parquet.metadata
        names = set(parquet.schema_arrow.names)
        size = sum(metadata.row_group(g).column(c).total_uncompressed_size
                   for g in range(metadata.num_row_groups) for c in range(metadata.num_columns))
    except Exception as error:  # noqa: BLE001 - any failure on a hostile file is the file's problem
        raise ArtifactError(f"{name} is not a readable Parquet file: {error}") from error
    if metadata.num_rows > max_rows:
        raise ArtifactError(f"{name} has {metadata.num_rows} rows, at most {max_rows} are read")
    if size > MAX_UNCOMPRESSED_BYTES:
        raise ArtifactError(f"{name} declares {size} uncompressed bytes, more than "
                            f"{MAX_UNCOMPRESSED_BYTES}")
    missing = [c for c in columns if c not in names]
    if missing:
        raise ArtifactError(f"{name} lacks the columns {missing} (has {sorted(names)[:20]})")
    return parquet


def _footer_checks(data: bytes, spec: ArtifactSpec, required_rows: int) -> pq.ParquetFile:
    return untrusted_parquet(data, spec.file, [*spec.key, *spec.columns], required_rows + EXTRA_ROWS_ALLOWED)


def key_form(values: pd.Series, column: str) -> pd.Series:
    """A key column in the form rows are matched on.

    Dates (to the day) and timestamps as naive UTC datetime64, years as whole numbers, anything
    else as text.
    """
    if column == "date":
        return instants(values).dt.normalize()
    if column in TIMESTAMP_COLUMNS:
        return instants(values)
    if column in YEAR_COLUMNS:
        numbers = pd.to_numeric(values, errors="raise").to_numpy(dtype=float)
        if not np.all(np.isfinite(numbers)) or not np.all(numbers == np.round(numbers)):
            raise ArtifactError(f"key column {column!r} must hold whole years")
        return pd.Series(numbers.astype(np.int64), index=values.index)
    return values.astype(str)


def _normalise(frame: pd.DataFrame, spec: ArtifactSpec) -> pd.DataFrame:
    out = pd.DataFrame(index=frame.index)
    for column in spec.key:
        out[column] = key_form(frame[column], column)
    for column, dtype in spec.columns.items():
        values = pd.to_numeric(frame[column], errors="raise") if dtype in ("float", "int") else frame[column]
        if dtype == "int":
            numbers = values.to_numpy(dtype=float)
            # Beyond 2**53 floats are not exact, and the int64 cast maps 1e300 and 2e300 to one label.
            if (not np.all(np.isfinite(numbers)) or not np.all(numbers == np.round(numbers))
                    or not np.all(np.abs(numbers) <= MAX_EXACT_INTEGER)):
                raise ArtifactError(f"{spec.file}: column {column!r} must hold whole numbers "
                                    f"(at most {MAX_EXACT_INTEGER} in magnitude)")
            values = values.astype(np.int64)
        elif dtype == "float":
            values = values.astype(float)
        else:
            values = values.astype(str)
        out[column] = values
    return out


def read_artifact(data: bytes, spec: ArtifactSpec, required: pd.DataFrame,
                  bounds: Bounds = BOUNDS) -> pd.DataFrame:
    """The artifact's required rows, in the order of `required`, with normalised dtypes.

    The file is parsed in a forked child under `bounds` (`parse_artifact` there); a child past a
    bound or dead is an `ArtifactError` like any unreadable file.

    Args:
        data: The collected bytes of `work/<spec.file>`.
        spec: The task's artifact spec.
        required: The key columns of every row the agent owes (dates as datetime64).
        bounds: What parsing may cost: memory, time, the size of the rows handed back.

    Raises:
        ArtifactError: On any problem with the file (unreadable, missing columns or rows, duplicate
            keys, non-finite values, wrong types, past a bound of the child).
    """
    return read_confined(partial(parse_artifact, data, spec, required), spec.file, ArtifactError, bounds)


def parse_artifact(data: bytes, spec: ArtifactSpec, required: pd.DataFrame) -> pd.DataFrame:
    """`read_artifact` in this process, without a memory bound: only for a child or trusted bytes."""
    parquet = _footer_checks(data, spec, len(required))
    try:
        table = parquet.read(columns=[*spec.key, *spec.columns], use_threads=False)
        # The file's pandas metadata is ignored: it could rename columns or turn keys into an index.
        frame = _normalise(table.to_pandas(ignore_metadata=True, use_threads=False), spec)
    except ArtifactError:
        raise
    except Exception as error:  # noqa: BLE001 - a hostile file may make any decoder step fail
        raise ArtifactError(f"{spec.file}: unreadable values: {error}") from error
    duplicated = frame.duplicated(spec.key)
    if duplicated.any():
        first = frame.loc[duplicated, spec.key].iloc[0].tolist()
        raise ArtifactError(f"{spec.file}: {int(duplicated.sum())} duplicate keys (first: {first})")
    wanted = required[spec.key].copy()
    for column in spec.key:
        wanted[column] = key_form(wanted[column], column)
    merged = wanted.merge(frame, on=spec.key, how="left", indicator=True)
    absent = merged["_merge"] == "left_only"
    if absent.any():
        first = merged.loc[absent, spec.key].iloc[0].astype(str).tolist()
        raise ArtifactError(f"{spec.file}: {int(absent.sum())} of {len(wanted)} required rows are "
                            f"missing (first: {first})")
    for column, dtype in spec.columns.items():
        if dtype == "float" and not np.all(np.isfinite(merged[column].to_numpy(dtype=float))):
            bad = int((~np.isfinite(merged[column].to_numpy(dtype=float))).sum())
            raise ArtifactError(f"{spec.file}: column {column!r} has {bad} null or non-finite "
                                "values on required rows")
    return merged.drop(columns="_merge")
