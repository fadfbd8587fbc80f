"""HDF source adapter: HDF5 datasets, 10x Genomics and AnnData count matrices, and gridded NetCDF.

Raw layout: any tree of files under ``raw_dir`` ending in ``.h5``, ``.hdf5``, ``.he5``, ``.h5ad``,
``.nc`` or ``.nc4``, for example::

    cellranger_v3/filtered_feature_bc_matrix.h5      10x v3: /matrix, /matrix/features/...
    cellranger_v2/filtered_gene_bc_matrices_h5.h5    10x v2: one group per genome
    pbmc/counts.h5ad                                 AnnData: X (dense, CSR or CSC), obs, var
    simulation/bucket_water_balance.nc               NetCDF-4, CF, (time, lat, lon) variables

Each file is read for everything it holds: every HDF5 file lists its datasets (path, shape, dtype,
attributes) and gives the numeric 1-D / 2-D datasets named in `Params.datasets` as long tables; a
count matrix gives features, barcodes and a COO count table. Its layout is told from the file's
structure, never from the suffix: a root tagged `encoding-type: anndata` is an AnnData file
(`X` with `obs` as barcodes and `var` as features, see `h5ad`); otherwise a `/matrix` group with
`features` is 10x v3 and top-level groups with `genes` / `gene_names` are 10x v2 (see
`sparse`). An aggregation's 10x matrix (`outs/count/` beside `outs/aggregation.csv`) also gives
its `libraries` (see `aggregation`). A NetCDF file, or an HDF5 file whose numeric datasets carry
dimension scales, gives its (time, y, x) grid variables, regular or curvilinear, in long form with
their cells (see `grid`): `grid` on real calendars (UTC), `grid_model_calendar` on model calendars
such as 360_day (the model's own dates, see `times`). Classic (NetCDF-3) files only take the grid
path. HDF5 errors name the file and the group / dataset path (`line` is None: HDF5 has no lines);
quarantined files are left out of every table.

No variable of a gridded file vanishes (see `layouts`): one the grid tables do not hold (4-D with
a level axis, a station series, ...) is a quarantine row `file, line -1, column (the variable),
problem (its dimensions and why), count (its values)` and a line on stderr, whatever `on_error`
says, and the rest of the file is read. Static numeric 1-D / 2-D variables of an HDF5-based file
are not listed there: `datasets` lists them and `Params.datasets` reads them.

`counts` and the grid tables are streamed (`stream`): every file is read and checked first (for a
grid: its metadata), then the counts are written a run of barcodes at a time and the grid values
read and written a slab at a time, so neither long table nor any file's cube is held whole in
memory; the other tables are small and built whole. A data error inside a grid variable (an
undeclared sentinel, an unreadable chunk) is only seen when its slab is read. With
`on_error="quarantine"` every grid value is therefore read once before streaming (a bad file goes
to quarantine with no row in any table); with `on_error="raise"` the error is raised mid-stream and
the repository writer discards the partial tables (the grid tables are yielded first, side by side,
so none is left).

Formats: The HDF Group, HDF5 (https://www.hdfgroup.org/solutions/hdf5/); Cell Ranger feature-
barcode matrices, Zheng et al. (2017), doi:10.1038/ncomms14049; CF conventions data model,
Hassell et al. (2017), doi:10.5194/gmd-10-4619-2017; AnnData on-disk format, Virshup et al. (2024),
doi:10.21105/joss.04371.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

import h5py
import numpy as np
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from stages.sources.hdf.aggregation import aggregation_csv, read_libraries
from stages.sources.hdf.datasets import DatasetInfo, list_datasets, open_hdf5, read_numeric, sniff
from stages.sources.hdf.grid import GridFile, plan_grid, read_grid_cells
from stages.sources.hdf.h5ad import is_anndata, read_anndata
from stages.sources.hdf.layouts import say_left_out
from stages.sources.hdf.sparse import SparseMatrix, read_sparse_groups, read_sparse_matrix, sparse_groups
from stages.sources.hdf.stream import (
    BATCH_ROWS,
    GRID_DTYPES,
    GRID_KEYS,
    MODEL_GRID_DTYPES,
    check_values,
    counts_chunks,
    grid_chunks,
    read_grid,
)
from stages.tables import LeftOut, RawFormatError, StreamedTables, Table, TableStream, quarantine_table

__all__ = ["CITATION", "LICENSE", "FileTables", "Params", "SparseMatrix", "read", "read_file", "read_grid",
           "read_grid_cells", "read_sparse_matrix"]

CITATION = (
    "Zheng, G. X. Y. et al. (2017): Massively parallel digital transcriptional profiling of single"
    " cells, Nature Communications 8, 14049, doi:10.1038/ncomms14049 (10x Genomics matrices);"
    " Hassell, D. et al. (2017): A data model of the Climate and Forecast metadata conventions"
    " (CF-1.6) with a software implementation (cf-python v2.1), GMD 10, 4619-4646,"
    " doi:10.5194/gmd-10-4619-2017 (gridded NetCDF); Virshup, I. et al. (2024): anndata: Access and"
    " store annotated data matrices, Journal of Open Source Software, doi:10.21105/joss.04371 (.h5ad)"
)
LICENSE = ("per file: the real 10x sample is from scverse/scanpy's tests (BSD-3-Clause); synthetic"
           " files written by stages.synthesize.hdf carry no restrictions")
SUFFIXES = frozenset({".h5", ".hdf5", ".he5", ".h5ad", ".nc", ".nc4"})
NETCDF_SUFFIXES = frozenset({".nc", ".nc4"})
GLOB_CHARACTERS = frozenset("*?[")
VARIES = "varies: see column unit"
STRING, INT, FLOAT = "string", "int64", "float64"
SCHEMAS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {  # table -> (keys, column dtypes)
    "datasets": (("file", "dataset"), {"file": STRING, "dataset": STRING, "ndim": INT, "shape": STRING,
                                       "dtype": STRING, "unit": STRING, "attributes": STRING}),
    "vector_values": (("file", "dataset", "index"), {"file": STRING, "dataset": STRING, "index": INT,
                                                     "value": FLOAT, "unit": STRING}),
    "matrix_values": (("file", "dataset", "row", "col"), {"file": STRING, "dataset": STRING, "row": INT,
                                                          "col": INT, "value": FLOAT, "unit": STRING}),
    "features": (("file", "feature_id"), {"file": STRING, "feature_id": STRING, "name": STRING,
                                          "feature_type": STRING, "genome": STRING}),
    "barcodes": (("file", "barcode"), {"file": STRING, "barcode": STRING}),
    "counts": (("file", "barcode", "feature_id"), {"file": STRING, "barcode": STRING,
                                                   "feature_id": STRING, "count": INT}),
    "grid": (GRID_KEYS, GRID_DTYPES),  # streamed
    "grid_model_calendar": (GRID_KEYS, MODEL_GRID_DTYPES),  # streamed beside `grid`
    "libraries": (("file", "gem_group", "field"), {"file": STRING, "gem_group": INT, "field": STRING,
                                                   "value": STRING}),
    "cells": (("file", "cell_id"), {"file": STRING, "cell_id": STRING, "row": INT, "col": INT,
                                    "lat_deg": FLOAT, "lon_deg": FLOAT}),
}
UNITS = {"lat_deg": "degrees_north", "lon_deg": "degrees_east", "value": VARIES}
TABLE_UNITS = {"libraries": {"value": "as written"}}
# source kind -> (the tables it streams side by side, chunks of one file's source); the grid tables
# first: a data error found mid-stream then leaves no table written
STREAMED = {"grid": (("grid", "grid_model_calendar"), grid_chunks), "counts": (("counts",), counts_chunks)}
STREAMED_TABLES = {table for tables, _ in STREAMED.values() for table in tables}


class Params(BaseModel):
    """Parameters of `ingest@hdf`."""

    model_config = ConfigDict(extra="forbid")
    datasets: list[str] = Field(default_factory=list)  # HDF5 paths or fnmatch patterns (`*` crosses `/`)
    variables: list[str] | None = None  # grid variables to read; None = every one on a grid, the rest recorded
    on_error: Literal["raise", "quarantine"] = "raise"
    batch_rows: int = Field(BATCH_ROWS, ge=1)  # rows per `grid` / `counts` batch (a Parquet row group)


@dataclass(frozen=True, eq=False)  # holds frames: compared by identity
class FileTables:
    """What one file gives: its whole tables (without `file`), what it streams, the requests it meets."""

    frames: dict[str, pd.DataFrame]
    matrix: SparseMatrix | None  # its 10x or AnnData matrix: the `counts` rows
    grid: GridFile | None  # its checked grid metadata: the grid tables' rows, the variables left out
    satisfied: set[str]


def read(raw_dir: Path, params: Params) -> Iterator[Table | StreamedTables]:
    """Yield the grid and `counts` streams, then the other tables of `SCHEMAS` and `quarantine`.

    Every table has a leading `file` key. With `on_error="quarantine"` a bad file is left out of
    every table and its error recorded; a requested dataset pattern or grid variable that no file
    holds is an error of `raw_dir`. The variables of a good gridded file that lie on no grid are
    recorded (and said on stderr) whatever `on_error` says. Every error but a grid data error with
    `on_error="raise"` (see the module docstring) is found before the first stream is yielded.
    """
    errors: list[RawFormatError] = []
    parts: dict[str, list[pd.DataFrame]] = {name: [] for name in SCHEMAS if name not in STREAMED_TABLES}
    sources: dict[str, list] = {kind: [] for kind in STREAMED}  # (file, SparseMatrix or GridFile)
    satisfied: set[str] = set()
    left_out: list[LeftOut] = []
    for name, found in _read_files(raw_dir, params, errors):
        for table, frame in found.frames.items():
            parts[table].append(frame.assign(file=name)[list(SCHEMAS[table][1])])
        sources["counts"] += [(name, found.matrix)] if found.matrix is not None else []
        sources["grid"] += [(name, found.grid)] if found.grid is not None else []
        left_out += found.grid.left_out if found.grid is not None else ()
        satisfied |= found.satisfied
    say_left_out(left_out)
    for pattern in params.datasets:
        if pattern not in satisfied:
            _keep(RawFormatError(raw_dir, None, f"no dataset matches {pattern!r}"), params, errors)
    for variable in params.variables or []:
        if variable not in satisfied:
            _keep(RawFormatError(raw_dir, None, f"no grid variable {variable!r}"), params, errors)
    for kind, (tables, chunks) in STREAMED.items():
        streams = tuple(TableStream(table, _empty(SCHEMAS[table][1]), SCHEMAS[table][0], _units(table))
                        for table in tables)
        yield StreamedTables(streams, _chunks(chunks, sources.pop(kind), params.batch_rows))
    for table, frames in parts.items():
        keys, columns = SCHEMAS[table]
        frame = pd.concat(frames, ignore_index=True) if frames else _empty(columns)
        yield Table(table, frame.astype(columns), keys, _units(table))
    yield quarantine_table(errors, left_out=left_out)


def read_file(path: Path, params: Params) -> FileTables:
    """The whole tables of one file, what it streams, and the requests of `params` it holds."""
    frames: dict[str, pd.DataFrame] = {}
    satisfied: set[str] = set()
    matrix = None
    gridded = path.suffix.lower() in NETCDF_SUFFIXES
    if sniff(path) == "hdf5":
        with open_hdf5(path) as h5:
            infos = list_datasets(path, h5)
            frames["datasets"] = _datasets_frame(infos)
            frames |= _requested_values(path, h5, infos, params.datasets, satisfied)
            if is_anndata(h5):  # checked first: its X group has CSC-like members but is no 10x matrix
                matrix = read_anndata(path, h5)
            elif (found := sparse_groups(path, h5)) is not None:
                matrix = read_sparse_groups(path, h5, *found)
            if matrix is not None:
                frames["features"] = matrix.features.sort_values("feature_id", ignore_index=True)
                frames["barcodes"] = pd.DataFrame({"barcode": pd.array(sorted(matrix.barcodes), dtype="string")})
                if (libraries := aggregation_csv(path)) is not None:
                    frames["libraries"] = read_libraries(libraries, path, h5, matrix.barcodes)
            gridded |= any(info.has_scales and info.numeric for info in infos)
    grid = plan_grid(path, params.variables) if gridded else None
    if grid is not None:
        frames["cells"] = grid.cells
        satisfied |= set(grid.names) & set(params.variables or [])
    return FileTables(frames, matrix, grid, satisfied)


def _read_files(raw_dir: Path, params: Params, errors: list[RawFormatError]) -> Iterator[tuple[str, FileTables]]:
    """(name under raw_dir, tables) of every good file, in name order; bad ones go to `_keep`."""
    paths = sorted((p for p in raw_dir.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES),
                   key=lambda p: p.relative_to(raw_dir).as_posix())
    if not paths:
        _keep(RawFormatError(raw_dir, None, f"no HDF5 or NetCDF files ({', '.join(sorted(SUFFIXES))})"),
              params, errors)
    for path in paths:
        try:
            found = read_file(path, params)
            if found.grid is not None and params.on_error == "quarantine":
                check_values(found.grid, params.batch_rows)  # so that a bad file streams no row
        except RawFormatError as error:
            _keep(error, params, errors)
            continue
        yield path.relative_to(raw_dir).as_posix(), found


def _chunks(chunks: Callable[..., Iterator[dict[str, pa.Table]]], sources: list[tuple[str, object]],
            batch_rows: int) -> Iterator[dict[str, pa.Table]]:
    """The chunks of every source in turn; a source is dropped once streamed (its arrays freed)."""
    while sources:
        name, source = sources.pop(0)
        yield from chunks(source, name, batch_rows)


def _empty(columns: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({column: pd.Series([], dtype=dtype) for column, dtype in columns.items()})


def _units(table: str) -> dict[str, str]:
    keys, columns = SCHEMAS[table]
    units = UNITS | TABLE_UNITS.get(table, {})
    return {column: units.get(column, "1") for column in columns if column not in keys}


def _keep(error: RawFormatError, params: Params, errors: list[RawFormatError]) -> None:
    if params.on_error == "raise":
        raise error
    errors.append(error)


def _datasets_frame(infos: list[DatasetInfo]) -> pd.DataFrame:
    return pd.DataFrame({
        "dataset": pd.array([i.dataset for i in infos], dtype="string"),
        "ndim": np.array([len(i.shape) for i in infos], dtype=np.int64),
        "shape": pd.array(["x".join(map(str, i.shape)) or "scalar" for i in infos], dtype="string"),
        "dtype": pd.array([i.dtype for i in infos], dtype="string"),
        "unit": pd.array([i.unit for i in infos], dtype="string"),
        "attributes": pd.array([i.attributes for i in infos], dtype="string"),
    })


def _requested_values(path: Path, h5: h5py.File, infos: list[DatasetInfo], patterns: list[str],
                      satisfied: set[str]) -> dict[str, pd.DataFrame]:
    """`vector_values` / `matrix_values` of the datasets the patterns match.

    A pattern without glob characters must name a numeric 1-D or 2-D dataset; a glob skips others.
    """
    parts: dict[str, list[pd.DataFrame]] = {"vector_values": [], "matrix_values": []}
    for info in infos:
        matched = [p for p in patterns if fnmatchcase(info.dataset, "/" + p.lstrip("/"))]
        satisfied.update(matched)
        if not matched:
            continue
        if not (info.numeric and len(info.shape) in (1, 2)):
            literal = [p for p in matched if not GLOB_CHARACTERS & set(p)]
            if literal:
                raise RawFormatError(path, None, f"{info.dataset}: requested dataset is not a numeric 1-D "
                                     f"or 2-D array (shape {info.shape}, dtype {info.dtype})")
            continue
        values = read_numeric(path, h5, info)
        indices = np.indices(values.shape).reshape(values.ndim, -1).astype(np.int64)
        names = ("index",) if values.ndim == 1 else ("row", "col")
        frame = pd.DataFrame({"dataset": pd.array([info.dataset] * values.size, dtype="string")}
                             | dict(zip(names, indices, strict=True))
                             | {"value": values.reshape(-1),
                                "unit": pd.array([info.unit] * values.size, dtype="string")})
        parts["vector_values" if values.ndim == 1 else "matrix_values"].append(frame)
    return {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items() if frames}
