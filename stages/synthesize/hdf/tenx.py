"""Synthetic 10x Genomics Cell Ranger count matrices (written by `stages.sources.hdf.sparse_write`).

Counts come from a cell-type mixture: each feature has a baseline expression share, each cell type
up-regulates its own marker genes, each cell has a log-normal library size, and UMI counts are
gamma-Poisson (negative binomial) around `library size x expression share`. v2 files are a
"barnyard" of two genomes: every barcode is a cell of one species and picks up a little ambient RNA
of the other.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from stages.sources.hdf.sparse_write import Counts

N_CELL_TYPES = 4
MARKER_SHARE = 0.05
MARKER_LOG_FOLD = 2.5
DISPERSION = 0.3
UMIS_PER_GENE = 0.1  # mean UMIs per cell and gene, about that of real 3' v3 data
CHUNK_CELLS = 256
ANTIBODIES = (("CD3", "CD3_TotalSeqB"), ("CD19", "CD19_TotalSeqB"))


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
