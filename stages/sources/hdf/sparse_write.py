"""10x Genomics Cell Ranger count matrices written as HDF5: the v3 and the v2 layouts.

The writing side of `hdf.sparse`: the synthetic source writes its matrices with it, and construct
writes a query's cells of a raw matrix with it (`stages.construction.native`). Strings are
fixed-length ASCII as Cell Ranger writes them; datasets are written without timestamps
(`track_times=False`), so the same counts give the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import scipy.sparse

PYTABLES_GROUP = {"CLASS": b"GROUP", "TITLE": b"", "VERSION": b"1.0"}
PYTABLES_ARRAY = {"CLASS": b"CARRAY", "TITLE": b"", "VERSION": b"1.1"}


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class Counts:
    """Features (rows), barcodes (columns) and a CSC count matrix."""

    feature_ids: list[str]
    names: list[str]
    feature_types: list[str]
    genomes: list[str]
    barcodes: list[str]
    matrix: scipy.sparse.csc_matrix


def write_v3(path: Path, counts: Counts, attrs: dict | None = None) -> None:
    """Cell Ranger >= 3.0 layout: `/matrix` and `/matrix/features`, root attr `version=2`.

    `attrs` replace or add root attributes (an aggregation's `library_ids`, ...).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as h5:
        h5.attrs["chemistry_description"] = "Single Cell 3' v3"
        h5.attrs["filetype"] = "matrix"
        h5.attrs["library_ids"] = np.array([b"synthetic"])
        h5.attrs["original_gem_groups"] = np.array([1], dtype=np.int64)
        h5.attrs["version"] = np.int64(2)
        for key, value in (attrs or {}).items():
            h5.attrs[key] = value
        group = h5.create_group("matrix")
        _write_csc(group, counts)
        features = group.create_group("features")
        _dataset(features, "_all_tag_keys", _strings(["genome"]))
        for name, values in (("feature_type", counts.feature_types), ("genome", counts.genomes),
                             ("id", counts.feature_ids), ("name", counts.names)):
            _dataset(features, name, _strings(values))


def write_v2(path: Path, genomes: dict[str, Counts]) -> None:
    """Cell Ranger 1.x/2.x layout: one group per genome with `genes` and `gene_names` (PyTables attrs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as h5:
        _set_attrs(h5, PYTABLES_GROUP | {"PYTABLES_FORMAT_VERSION": b"2.1"})
        for genome, counts in genomes.items():
            group = h5.create_group(genome)
            _set_attrs(group, PYTABLES_GROUP)
            _write_csc(group, counts, PYTABLES_ARRAY)
            _set_attrs(_dataset(group, "genes", _strings(counts.feature_ids)), PYTABLES_ARRAY)
            _set_attrs(_dataset(group, "gene_names", _strings(counts.names)), PYTABLES_ARRAY)


def _write_csc(group: h5py.Group, counts: Counts, attrs: dict[str, bytes] | None = None) -> None:
    matrix = counts.matrix
    arrays = {"barcodes": _strings(counts.barcodes), "data": matrix.data.astype(np.int32),
              "indices": matrix.indices.astype(np.int64), "indptr": matrix.indptr.astype(np.int64),
              "shape": np.array(matrix.shape, dtype=np.int32)}
    for name, values in arrays.items():
        _set_attrs(_dataset(group, name, values), attrs or {})


def _dataset(group: h5py.Group, name: str, values: np.ndarray) -> h5py.Dataset:
    if len(values) == 0 or name == "shape":
        return group.create_dataset(name, data=values, track_times=False)
    return group.create_dataset(name, data=values, chunks=(min(len(values), 80000),), compression="gzip",
                                compression_opts=4, shuffle=True, track_times=False)


def _strings(values: list[str]) -> np.ndarray:
    """Fixed-length ASCII byte strings, as Cell Ranger writes them (`|S<max length>`)."""
    width = max(max(map(len, values), default=1), 1)
    return np.array([value.encode("ascii") for value in values], dtype=f"S{width}")


def _set_attrs(node: h5py.HLObject, attrs: dict[str, bytes]) -> None:
    for key, value in attrs.items():
        node.attrs[key] = np.bytes_(value)
