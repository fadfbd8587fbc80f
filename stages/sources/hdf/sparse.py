"""10x Genomics feature-barcode matrices (Cell Ranger HDF5, CSC, columns = barcodes), validated.

v3 (Cell Ranger >= 3): one group `/matrix` with `barcodes, data, indices, indptr, shape` and
`features/{id, name, feature_type[, genome]}`. v2 (Cell Ranger 1.x/2.x): one group per genome
(`/<genome>`) with the same CSC members plus `genes, gene_names`; several genome groups are joined
into one matrix over the union of their barcodes.

`SparseMatrix` is also what an AnnData file's `X` becomes (`h5ad`, layout "anndata"); the checks
of the compressed arrays both layouts use are `csc`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import scipy.sparse

from stages.sources.hdf.csc import check_csc, check_no_duplicate_entries, check_unique
from stages.sources.hdf.datasets import decode_strings, open_hdf5, reading, resolve, text_attribute
from stages.tables import RawFormatError

CSC_MEMBERS = ("barcodes", "data", "indices", "indptr", "shape")
V3_FEATURES = ("id", "name", "feature_type")
FEATURE_COLUMNS = ("feature_id", "name", "feature_type", "genome")
V2_FEATURE_TYPE = "Gene Expression"
V2_GENES = frozenset({"genes", "gene_names"})


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class SparseMatrix:
    """A validated count matrix: `features` rows (in matrix order), `barcodes` columns, CSC arrays.

    `layout` is "v3", "v2" or "anndata"; `groups` the HDF5 groups (or dataset) it was read from.
    """

    layout: str
    groups: tuple[str, ...]
    features: pd.DataFrame
    barcodes: np.ndarray
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        """(number of features, number of barcodes)."""
        return len(self.features), len(self.barcodes)

    def to_scipy(self) -> scipy.sparse.csc_matrix:
        """The matrix as a scipy CSC matrix (features x barcodes)."""
        return scipy.sparse.csc_matrix((self.data, self.indices, self.indptr), shape=self.shape)

    def counts_frame(self) -> pd.DataFrame:
        """Long COO table `barcode, feature_id, count` of the stored entries, sorted by both ids."""
        parts = list(self.entry_batches(max(len(self.data), 1)))
        columns, rows, counts = (np.concatenate([np.zeros(0, np.int64)] + [part[i] for part in parts])
                                 for i in range(3))
        return pd.DataFrame({
            "barcode": pd.array(self.barcodes[columns], dtype="string"),
            "feature_id": pd.array(self.features["feature_id"].to_numpy(dtype=object)[rows], dtype="string"),
            "count": counts,
        })

    def entry_batches(self, batch_rows: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(barcode index, feature index, count) arrays of the stored entries, sorted by barcode then feature id.

        A batch holds whole barcodes: about `batch_rows` entries, more when one barcode alone has more.
        """
        by_barcode = np.argsort(_ranks(self.barcodes))  # the column of each barcode in sorted order
        feature_rank = _ranks(self.features["feature_id"].to_numpy(dtype=object))
        sizes = np.diff(self.indptr)[by_barcode]
        ends = np.cumsum(sizes)
        total = int(ends[-1]) if len(ends) else 0
        start = 0
        for stop in np.searchsorted(ends, np.arange(batch_rows, total + batch_rows, batch_rows), side="right"):
            if stop > start:
                columns, lengths = by_barcode[start:stop], sizes[start:stop]
                first = np.repeat(self.indptr[columns] - (np.cumsum(lengths) - lengths), lengths)
                entries = np.arange(len(first), dtype=np.int64) + first  # the entries of each column in turn
                position = np.repeat(np.arange(len(columns)), lengths)
                entries = entries[np.lexsort((feature_rank[self.indices[entries]], position))]
                yield np.repeat(columns, lengths), self.indices[entries], self.data[entries].astype(np.int64)
            start = stop


def sparse_groups(path: Path, h5: h5py.File) -> tuple[str, list[str]] | None:
    """("v3", ["/matrix"]) or ("v2", genome groups) when the file holds a 10x matrix, else None.

    The layout is told from the structure alone: v3 is a `/matrix` group holding `features`
    (or a link called `matrix` that is not a plain dataset, so that its error names it); v2 is
    one or more top-level groups holding `genes` or `gene_names`. Root attributes such as
    `filetype = matrix` are hints that both Cell Ranger 2 and 3 write, so they never pick the
    layout; a file that carries that hint, or has a top-level group with CSC members, but fits
    neither layout is an error naming what is missing.
    """
    members = {name: found for name in sorted(h5) if (found := _group_members(h5, name)) is not None}
    link = h5.get("matrix", getlink=True)
    if (link is not None and not isinstance(link, h5py.HardLink)) or "features" in members.get("matrix", ()):
        return "v3", ["/matrix"]
    genomes = [f"/{name}" for name, found in members.items() if found & V2_GENES]
    if genomes:
        return "v2", genomes
    partial = [name for name, found in members.items() if found & set(CSC_MEMBERS)]
    if partial:
        name = "matrix" if "matrix" in partial else partial[0]
        missing = [key for key in CSC_MEMBERS if key not in members[name]]
        have = f" (missing {', '.join(missing)})" if missing else ""
        raise RawFormatError(path, None, f"group /{name}: not a 10x matrix: neither 'features' (Cell Ranger 3"
                             f" /matrix layout) nor 'genes' and 'gene_names' (Cell Ranger 2 genome layout){have}")
    if text_attribute(h5, "filetype") == "matrix":
        raise RawFormatError(path, None, "group /: root attribute filetype='matrix' but no 10x matrix: neither"
                             " a /matrix group with features (Cell Ranger 3) nor a genome group with"
                             f" {', '.join(CSC_MEMBERS)}, genes and gene_names (Cell Ranger 2)")
    return None


def read_sparse_matrix(path: Path) -> SparseMatrix:
    """Read and validate the 10x matrix of one HDF5 file (v3 or v2 layout)."""
    with open_hdf5(path) as h5:
        found = sparse_groups(path, h5)
        if found is None:
            raise RawFormatError(path, None, "group /: no 10x matrix (neither /matrix nor a genome "
                                 "group with barcodes and indptr)")
        return read_sparse_groups(path, h5, *found)


def read_sparse_groups(path: Path, h5: h5py.File, layout: str, groups: list[str]) -> SparseMatrix:
    """Read the matrix of the given groups of an open file, joining v2 genome groups."""
    parts = [_read_group(path, h5, layout, group) for group in groups]
    if len(parts) == 1:
        return parts[0]
    features = pd.concat([p.features for p in parts], ignore_index=True)
    check_unique(path, "groups " + ", ".join(groups), "feature id",
                  features["feature_id"].to_numpy(dtype=object))
    barcodes = list(dict.fromkeys(b for p in parts for b in p.barcodes))
    column_of = {barcode: index for index, barcode in enumerate(barcodes)}
    rows, columns, data, offset = [], [], [], 0
    for part in parts:
        coo = part.to_scipy().tocoo()
        rows.append(coo.row + offset)
        columns.append(np.array([column_of[b] for b in part.barcodes], dtype=np.int64)[coo.col])
        data.append(coo.data)
        offset += len(part.features)
    shape = (len(features), len(barcodes))
    joined = scipy.sparse.coo_matrix((np.concatenate(data), (np.concatenate(rows),
                                      np.concatenate(columns))), shape=shape).tocsc()
    return SparseMatrix(layout, tuple(groups), features, np.array(barcodes, dtype=object),
                        joined.data.astype(np.int64), joined.indices.astype(np.int64),
                        joined.indptr.astype(np.int64))


def _group_members(h5: h5py.File, name: str) -> set[str] | None:
    """The link names of a top-level group reached by a hard link; None for anything else."""
    link = h5.get(name, getlink=True)
    if not isinstance(link, h5py.HardLink):
        return None
    try:
        node = h5[name]
    except (KeyError, OSError):
        return None
    return set(node) if isinstance(node, h5py.Group) else None


def _read_group(path: Path, h5: h5py.File, layout: str, name: str) -> SparseMatrix:
    group = resolve(path, h5, name.lstrip("/"))
    if not isinstance(group, h5py.Group):
        raise RawFormatError(path, None, f"{name}: expected a group, found a dataset")
    members = {key: member_dataset(path, group, key) for key in CSC_MEMBERS}
    barcodes = decode_strings(path, members["barcodes"])
    features = _read_features(path, group) if layout == "v3" else _read_genes(path, group)
    check_unique(path, f"{name}/barcodes", "barcode", barcodes)
    check_unique(path, f"{name}/features" if layout == "v3" else f"{name}/genes", "feature id",
                  features["feature_id"].to_numpy(dtype=object))
    with reading(path, name):
        arrays = {key: members[key][()] for key in ("data", "indices", "indptr", "shape")}
    data, indices, indptr = check_csc(path, name, arrays, len(features), len(barcodes))
    check_no_duplicate_entries(path, name, indices, indptr, features["feature_id"].to_numpy(dtype=object),
                               barcodes)
    return SparseMatrix(layout, (name,), features, barcodes, data, indices, indptr)


def member_dataset(path: Path, group: h5py.Group, key: str) -> h5py.Dataset:
    """The dataset linked as `key` in `group`; a missing link or a group there is an error naming both."""
    node = resolve(path, group, key)
    if not isinstance(node, h5py.Dataset):
        raise RawFormatError(path, None, f"group {group.name}: {key!r} is a group, expected a dataset")
    return node


def _read_features(path: Path, group: h5py.Group) -> pd.DataFrame:
    table = resolve(path, group, "features")
    if not isinstance(table, h5py.Group):
        raise RawFormatError(path, None, f"{table.name}: expected a group, found a dataset")
    columns = {key: decode_strings(path, member_dataset(path, table, key)) for key in V3_FEATURES}
    genome = decode_strings(path, member_dataset(path, table, "genome")) if "genome" in table else None
    sizes = {key: len(values) for key, values in columns.items()} | (
        {"genome": len(genome)} if genome is not None else {})
    if len(set(sizes.values())) > 1:
        raise RawFormatError(path, None, f"group {table.name}: feature columns differ in length {sizes}")
    if genome is None:
        genome = np.full(sizes["id"], None, dtype=object)
    genome = np.where(genome == "", None, genome)  # antibody / CRISPR features have no genome
    return features_frame(columns["id"], columns["name"], columns["feature_type"], genome)


def _read_genes(path: Path, group: h5py.Group) -> pd.DataFrame:
    ids = decode_strings(path, member_dataset(path, group, "genes"))
    names = decode_strings(path, member_dataset(path, group, "gene_names"))
    if len(ids) != len(names):
        raise RawFormatError(path, None, f"group {group.name}: genes has {len(ids)} entries but "
                             f"gene_names has {len(names)}")
    genome = group.name.rsplit("/", 1)[-1]
    return features_frame(ids, names, np.full(len(ids), V2_FEATURE_TYPE, object),
                     np.full(len(ids), genome, object))


def features_frame(*columns: np.ndarray) -> pd.DataFrame:
    """The `features` frame (feature_id, name, feature_type, genome) of four arrays, as strings."""
    return pd.DataFrame({name: pd.array(values, dtype="string")
                         for name, values in zip(FEATURE_COLUMNS, columns, strict=True)})


def _ranks(values: np.ndarray) -> np.ndarray:
    """Position of each value in sorted order (values are unique)."""
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[np.argsort(values.astype(str), kind="stable")] = np.arange(len(values))
    return ranks
