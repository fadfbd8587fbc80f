"""AnnData `.h5ad` files: the count matrix `X` with its `obs` (cells) and `var` (features) indexes.

The on-disk format (anndata >= 0.8, "On-disk format" in the anndata documentation) tags every
element with an `encoding-type` attribute; the root group of a file carries
`encoding-type: anndata`, and that tag, not the suffix, tells this layout from a 10x matrix.
Read here:

- `obs`, `var`: dataframe groups (`encoding-type: dataframe`) whose `_index` attribute names
  the dataset holding the row labels (a UTF-8 string array). obs labels are the cells (the
  `barcode` column of the tables), var labels the features (`feature_id`); both must be
  non-empty and unique.
- `X`, shape (n_obs, n_var): a dense dataset (`encoding-type: array`), or a sparse group
  (`encoding-type: csr_matrix` or `csc_matrix`) of `data`, `indices`, `indptr` with the shape
  as the group attribute `shape`. CSR compresses obs, so its arrays are already the 10x
  orientation (CSC over barcodes); CSC compresses var and is transposed after validation. A dense
  `X` keeps its non-zero cells as entries. The values must be counts: finite, non-negative and
  integral (floats such as 3.0 are accepted, a normalised X is not).

The matrix becomes the same `SparseMatrix` as a 10x file's, so `counts`, `features` and
`barcodes` rows are built one way. An AnnData var table has no fixed columns for a gene's name,
type or genome (scanpy's 10x reader and CELLxGENE name them differently), so `name`,
`feature_type` and `genome` are null. Nothing else (`layers`, `raw`, `obsm`, `uns`, ...) is read
for the tables; their datasets are still listed in `datasets`. Anything the reader cannot place
(a missing or non-dataframe `obs`/`var`, an `X` of another encoding or of non-numeric dtype,
shapes that disagree, inconsistent sparse arrays) is a `RawFormatError` naming the file and the
HDF5 path. Hand-read with h5py, like the 10x layouts, rather than with the `anndata` package:
only three elements are needed, the 10x checks and error messages are shared, and a file is not
refused for an `uns` entry that this source never reads.

Format: Virshup, I. et al. (2024), anndata: Access and store annotated data matrices, Journal of
Open Source Software, doi:10.21105/joss.04371.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import scipy.sparse

from stages.sources.hdf.csc import check_csc, check_no_duplicate_entries, check_unique
from stages.sources.hdf.datasets import decode_strings, reading, resolve, text_attribute
from stages.sources.hdf.sparse import SparseMatrix, features_frame, member_dataset
from stages.tables import RawFormatError

LAYOUT = "anndata"
SPARSE_AXES = {"csr_matrix": ("var", "obs"), "csc_matrix": ("obs", "var")}  # encoding -> (rows, compressed)
AXIS_WORDS = {"obs": "cell", "var": "feature"}


def is_anndata(h5: h5py.File) -> bool:
    """Whether the root group is tagged `encoding-type: anndata`."""
    return text_attribute(h5, "encoding-type") == LAYOUT


def read_anndata(path: Path, h5: h5py.File) -> SparseMatrix:
    """`X` of an AnnData file as a validated matrix: features = var rows, barcodes = obs rows."""
    labels = {axis: read_index(path, h5, axis) for axis in ("obs", "var")}
    x = resolve(path, h5, "X")
    encoding = text_attribute(x, "encoding-type")
    if isinstance(x, h5py.Dataset) and encoding in (None, "array"):
        data, indices, indptr = _read_dense(path, x, labels)
    elif isinstance(x, h5py.Group) and encoding in SPARSE_AXES:
        data, indices, indptr = _read_sparse(path, x, encoding, labels)
    else:
        kind = "dataset" if isinstance(x, h5py.Dataset) else "group"
        raise RawFormatError(path, None, f"/X: a {kind} with encoding-type {encoding!r}; expected a dense array"
                             " or a group with encoding-type 'csr_matrix' or 'csc_matrix'")
    empty = np.full(len(labels["var"]), None, dtype=object)
    return SparseMatrix(LAYOUT, ("/X",), features_frame(labels["var"], empty, empty, empty), labels["obs"],
                        data, indices, indptr)


def read_index(path: Path, h5: h5py.File, axis: str) -> np.ndarray:
    """The row labels of the dataframe `/obs` or `/var` (the dataset its `_index` attribute names)."""
    group = resolve(path, h5, axis)
    encoding = text_attribute(group, "encoding-type")
    if not isinstance(group, h5py.Group) or encoding != "dataframe":
        kind = "dataset" if isinstance(group, h5py.Dataset) else "group"
        raise RawFormatError(path, None, f"/{axis}: a {kind} with encoding-type {encoding!r}; expected a"
                             " dataframe group (encoding-type 'dataframe', anndata >= 0.8)")
    index = text_attribute(group, "_index")
    if index is None:
        raise RawFormatError(path, None, f"/{axis}: dataframe has no '_index' attribute naming its index")
    labels = decode_strings(path, member_dataset(path, group, index), "utf-8")
    check_unique(path, f"/{axis}/{index}", f"{axis} name", labels)
    return labels


def _read_dense(path: Path, x: h5py.Dataset, labels: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """CSC arrays over obs (= CSR of X) of the non-zero cells of a dense X, checked to be counts."""
    with reading(path, "/X"):
        values = x[()]
    expected = (len(labels["obs"]), len(labels["var"]))
    if values.dtype.kind not in "iuf" or values.shape != expected:
        raise RawFormatError(path, None, f"/X: dense array of shape {values.shape} and dtype {values.dtype};"
                             f" expected numeric counts of shape {expected} (obs x var)")
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values) | (values != np.round(values)) | (values < 0)
    else:
        bad = values < 0
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        raise RawFormatError(path, None, f"/X[{row}, {column}]={values[row, column]} is not a count (a finite,"
                             " non-negative integer)")
    matrix = scipy.sparse.csr_matrix(values)
    return (matrix.data.astype(np.int64), matrix.indices.astype(np.int64), matrix.indptr.astype(np.int64))


def _read_sparse(path: Path, x: h5py.Group, encoding: str,
                 labels: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """CSC arrays over obs of a sparse X group, validated in the group's own orientation."""
    rows, compressed = SPARSE_AXES[encoding]
    members = {key: member_dataset(path, x, key) for key in ("data", "indices", "indptr")}
    with reading(path, "/X"):
        arrays = {key: dataset[()] for key, dataset in members.items()}
        shape = np.asarray(x.attrs["shape"]) if "shape" in x.attrs else None
    expected = [len(labels["obs"]), len(labels["var"])]
    if shape is None or shape.ndim != 1 or shape.dtype.kind not in "iu" or shape.tolist() != expected:
        found = "no shape attribute" if shape is None else f"shape attribute {shape.tolist()}"
        raise RawFormatError(path, None, f"group /X: {found}; expected {expected} ({expected[0]} obs x "
                             f"{expected[1]} var)")
    sizes = {"obs": expected[0], "var": expected[1]}
    arrays["shape"] = np.array([sizes[rows], sizes[compressed]], dtype=np.int64)
    data, indices, indptr = check_csc(path, "/X", arrays, sizes[rows], sizes[compressed], (rows, compressed))
    check_no_duplicate_entries(path, "/X", indices, indptr, labels[rows], labels[compressed],
                               (AXIS_WORDS[rows], AXIS_WORDS[compressed]))
    if compressed == "obs":
        return data, indices, indptr
    # CSC of X (obs x var) is CSR of its transpose (var x obs): convert that to CSC over obs
    matrix = scipy.sparse.csr_matrix((data, indices, indptr), shape=(sizes["var"], sizes["obs"])).tocsc()
    return (matrix.data.astype(np.int64), matrix.indices.astype(np.int64), matrix.indptr.astype(np.int64))
