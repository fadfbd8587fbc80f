"""The checks of a compressed sparse matrix read from HDF5, shared by the 10x and AnnData layouts.

Ids unique and non-empty (`check_unique`), the compressed arrays consistent with each other and
with the axis sizes (`check_csc`), no cell stored twice (`check_no_duplicate_entries`). Each
message names the file, the HDF5 group and the axes of the layout it checks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stages.tables import RawFormatError


def check_unique(path: Path, where: str, what: str, values: np.ndarray) -> None:
    """Raise on an empty or a repeated id, naming `where` (an HDF5 path) and the index."""
    empty = np.flatnonzero(values == "")
    if len(empty):
        raise RawFormatError(path, None, f"{where}: empty {what} at index {empty[0]}")
    duplicated = pd.Series(values).duplicated().to_numpy()
    if duplicated.any():
        index = int(np.argmax(duplicated))
        first = int(np.argmax(values == values[index]))
        raise RawFormatError(path, None, f"{where}: duplicated {what} {values[index]!r} at index "
                             f"{index} (first at index {first})")


def check_csc(path: Path, name: str, arrays: dict[str, np.ndarray], n_rows: int, n_columns: int,
              axes: tuple[str, str] = ("features", "barcodes")) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate compressed arrays (`indptr` over the columns) against each other and the axis sizes.

    `axes` names the rows and the columns in messages; `shape` is (n_rows, n_columns). Returns
    data, indices and indptr as int64.
    """
    def fail(problem: str) -> RawFormatError:
        return RawFormatError(path, None, f"group {name}: {problem}")

    for key, values in arrays.items():
        if values.ndim != 1 or values.dtype.kind not in ("iuf" if key == "data" else "iu"):
            expected = "integer counts" if key == "data" else "integers"
            raise fail(f"{key} has shape {values.shape} and dtype {values.dtype}, expected 1-D {expected}")
    shape, data = arrays["shape"], arrays["data"]
    if len(shape) != 2 or (shape < 0).any():
        raise fail(f"shape must be two non-negative integers, found {shape.tolist()}")
    if (int(shape[0]), int(shape[1])) != (n_rows, n_columns):
        raise fail(f"shape {shape.tolist()} does not match {n_rows} {axes[0]} x {n_columns} {axes[1]}")
    indptr, indices = arrays["indptr"].astype(np.int64), arrays["indices"].astype(np.int64)
    if len(indptr) != n_columns + 1:
        raise fail(f"indptr has {len(indptr)} entries, expected n_{axes[1]} + 1 = {n_columns + 1}")
    if indptr[0] != 0:
        raise fail(f"indptr[0] is {indptr[0]}, expected 0")
    steps = np.diff(indptr)
    if (steps < 0).any():
        k = int(np.argmax(steps < 0))
        raise fail(f"indptr is not monotone: indptr[{k + 1}]={indptr[k + 1]} < indptr[{k}]={indptr[k]}")
    if indptr[-1] != len(data) or len(indices) != len(data):
        raise fail(f"indptr[-1]={indptr[-1]}, len(indices)={len(indices)} and len(data)={len(data)} "
                   "must be equal")
    outside = (indices < 0) | (indices >= n_rows)
    if outside.any():
        k = int(np.argmax(outside))
        raise fail(f"indices[{k}]={indices[k]} is outside [0, {n_rows})")
    if data.dtype.kind == "f" and not (np.isfinite(data) & (data == np.round(data))).all():
        k = int(np.argmax(~(np.isfinite(data) & (data == np.round(data)))))
        raise fail(f"data[{k}]={data[k]} is not an integer count")
    if (data < 0).any():
        k = int(np.argmax(data < 0))
        raise fail(f"data[{k}]={data[k]} is a negative count")
    return data.astype(np.int64), indices, indptr


def check_no_duplicate_entries(path: Path, name: str, indices: np.ndarray, indptr: np.ndarray,
                               row_ids: np.ndarray, column_ids: np.ndarray,
                               words: tuple[str, str] = ("feature", "barcode")) -> None:
    """Raise on a (row, column) cell stored twice, naming both ids and the entry's position."""
    unsorted = indices[1:] <= indices[:-1]
    starts = indptr[1:-1]
    unsorted[starts[(starts > 0) & (starts < len(indices))] - 1] = False  # each column starts afresh
    if not unsorted.any():
        return  # strictly increasing within every column (as Cell Ranger writes them): no duplicate
    columns = np.repeat(np.arange(len(column_ids), dtype=np.int64), np.diff(indptr))
    cells = columns * max(len(row_ids), 1) + indices
    order = np.argsort(cells, kind="stable")
    repeated = np.flatnonzero(np.diff(cells[order]) == 0)
    if len(repeated):
        k = int(order[repeated[0] + 1])
        raise RawFormatError(path, None, f"group {name}: duplicated entry for {words[0]} "
                             f"{row_ids[int(indices[k])]!r} in {words[1]} {column_ids[columns[k]]!r} "
                             f"(indices[{k}])")
