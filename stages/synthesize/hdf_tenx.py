"""Synthetic 10x Genomics Cell Ranger count matrices, written in the v3 and the v2 HDF5 layouts.

Counts come from a cell-type mixture: each feature has a baseline expression share, each cell type
up-regulates its own marker genes, each cell has a log-normal library size, and UMI counts are
gamma-Poisson (negative binomial) around `library size x expression share`. v2 files are a
"barnyard" of two genomes: every barcode is a cell of one species and picks up a little ambient RNA
of the other. Datasets are written without timestamps (`track_times=False`) so bytes are stable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import scipy.sparse

N_CELL_TYPES = 4
MARKER_SHARE = 0.05
MARKER_LOG_FOLD = 2.5
DISPERSION = 0.3
UMIS_PER_GENE = 0.1  # mean UMIs per cell and gene, about that of real 3' v3 data
CHUNK_CELLS = 256
ANTIBODIES = (("CD3", "CD3_TotalSeqB"), ("CD19", "CD19_TotalSeqB"))
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


def draw_barcodes(rng: np.random.Generator, n: int) -> list[str]:
    """`n` distinct 16-base cell barcodes with the GEM-group suffix `-1`, sorted as Cell Ranger does."""
    codes: set[str] = set()
    while len(codes) < n:
        bases = rng.integers(0, 4, (n - len(codes), 16))
        codes.update("".join("ACGT"[b] for b in row) + "-1" for row in bases)
    return sorted(codes)[:n]


def simulate_genes(rng: np.random.Generator, n_genes: int, cell_types: np.ndarray,
                   library: np.ndarray) -> scipy.sparse.csc_matrix:
    """Gamma-Poisson UMI counts (genes x cells) for cells of the given types and library sizes."""
    log_share = rng.normal(0.0, 1.2, (n_genes, 1)) + np.zeros((1, N_CELL_TYPES))
    for kind in range(N_CELL_TYPES):
        markers = rng.choice(n_genes, max(1, int(MARKER_SHARE * n_genes)), replace=False)
        log_share[markers, kind] += MARKER_LOG_FOLD
    share = np.exp(log_share) / np.exp(log_share).sum(axis=0)
    blocks = []
    for start in range(0, len(cell_types), CHUNK_CELLS):
        kinds, size = cell_types[start:start + CHUNK_CELLS], library[start:start + CHUNK_CELLS]
        mean = share[:, kinds] * size
        blocks.append(scipy.sparse.csc_matrix(rng.poisson(mean * rng.gamma(
            1 / DISPERSION, DISPERSION, mean.shape)).astype(np.int32)))
    return scipy.sparse.hstack(blocks, format="csc") if blocks else scipy.sparse.csc_matrix((n_genes, 0))


def simulate_v3(rng: np.random.Generator, n_features: int, n_barcodes: int) -> Counts:
    """A single-genome Gene Expression matrix plus two antibody-capture features."""
    n_antibodies = len(ANTIBODIES) if n_features >= 10 else 0
    n_genes = n_features - n_antibodies
    types = rng.integers(0, N_CELL_TYPES, n_barcodes)
    library = rng.lognormal(np.log(UMIS_PER_GENE * n_genes), 0.5, n_barcodes)
    genes = simulate_genes(rng, n_genes, types, library)
    adt_mean = 20.0 * (1 + 4 * (types[None, :] == np.arange(n_antibodies)[:, None]))
    adt = scipy.sparse.csc_matrix(rng.poisson(adt_mean).astype(np.int32))
    ids = [f"SYNG{number:011d}" for number in rng.permutation(n_genes) + 1]
    names = [f"SG{number}" for number in range(1, n_genes + 1)]
    if n_genes >= 2:
        names[-1] = names[-2]  # gene symbols are not unique in real references either
    return Counts(
        feature_ids=ids + [ab_id for _, ab_id in ANTIBODIES[:n_antibodies]],
        names=names + [name for name, _ in ANTIBODIES[:n_antibodies]],
        feature_types=["Gene Expression"] * n_genes + ["Antibody Capture"] * n_antibodies,
        genomes=["SYN1"] * n_genes + [""] * n_antibodies,
        barcodes=draw_barcodes(rng, n_barcodes),
        matrix=scipy.sparse.vstack([genes, adt], format="csc"),
    )


def simulate_v2(rng: np.random.Generator, n_genes: int, n_barcodes: int) -> dict[str, Counts]:
    """A two-genome barnyard: the same barcodes in both genome groups, cells of one species each."""
    barcodes = draw_barcodes(rng, n_barcodes)
    human = rng.random(n_barcodes) < 0.6
    types = rng.integers(0, N_CELL_TYPES, n_barcodes)
    library = rng.lognormal(np.log(UMIS_PER_GENE * n_genes), 0.5, n_barcodes)
    out = {}
    for genome, prefix, own in (("hg19", "SYNHSG", human), ("mm10", "SYNMMG", ~human)):
        counts = simulate_genes(rng, n_genes, types, library * np.where(own, 1.0, 0.02))
        ids = [f"{prefix}{number:011d}" for number in rng.permutation(n_genes) + 1]
        out[genome] = Counts(ids, [f"{genome}_g{i}" for i in range(1, n_genes + 1)],
                             ["Gene Expression"] * n_genes, [genome] * n_genes, barcodes, counts)
    return out


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
