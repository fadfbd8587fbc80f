"""A synthetic Cell Ranger `aggr` output: PBMC libraries of several donors, control and stimulated.

Written as Cell Ranger writes an aggregation (`outs/aggregation.csv` and
`outs/count/filtered_feature_bc_matrix.h5`): one v3 matrix over every library, each barcode carrying
the GEM-well suffix `-<n>` of the library in row n of `aggregation.csv`, and the root attribute
`library_ids` listing the libraries' `sample_id` in that order. The CSV carries the study's own
columns (donor, condition, age, sex), as `aggr` allows.

The design follows an interferon-beta stimulation of peripheral blood mononuclear cells, one
control and one stimulated library per donor (as in Kang et al. 2018, doi:10.1038/nbt.4042):

- four cell types (T, B, monocyte, NK cells) with their marker genes and, for T and B cells,
  antibody-derived tags (CD3, CD19) as in CITE-seq; a donor's B-cell share falls with age;
- interferon-stimulated genes (ISG15, IFI6, MX1, ...) rise in stimulated cells by a donor's own
  response strength, more in monocytes by a donor's own factor;
- damaged cells (a library's own share) lose cytoplasmic RNA: fewer UMIs, more mitochondrial reads;
- heterotypic doublets (a library's own rate, higher where more cells were loaded) carry the RNA
  and both antibody tags of two cells;
- a few 16-base barcodes recur in two libraries (told apart only by the suffix), as happens when
  libraries are aggregated.

Which cell is of which type, damaged or a doublet is nowhere in the files.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse

from stages.sources.hdf.sparse_write import Counts, write_v3
from stages.synthesize.hdf.tenx import ANTIBODIES, DISPERSION, draw_barcodes

MATRIX_FILE = "cellranger_aggr/outs/count/filtered_feature_bc_matrix.h5"
AGGREGATION_FILE = "cellranger_aggr/outs/aggregation.csv"
N_DONORS = 6
CONDITIONS = ("ctrl", "stim")
TYPE_NAMES = ("T", "B", "monocyte", "NK")
MARKERS = (("CD3E", "CD3D", "IL7R", "CD2"), ("CD19", "MS4A1", "CD79A", "CD79B"),
           ("CD14", "LYZ", "S100A8", "FCN1"), ("NKG7", "GNLY", "KLRD1", "PRF1"))
ISGS = ("ISG15", "IFI6", "IFIT1", "IFIT3", "MX1", "OAS1", "IFITM3", "LY6E")
MITO = ("MT-CO1", "MT-CO2", "MT-CO3", "MT-ND1", "MT-ND2", "MT-ND4", "MT-ATP6", "MT-CYB")
MARKER_LOG_FOLD = 3.0
UMIS_PER_CELL = 800  # median gene-expression UMIs of a healthy singlet
SHARED_BARCODES = 0.02  # share of a library's cells whose 16 bases recur in an earlier library
MIN_GENES = sum(map(len, MARKERS)) + len(ISGS) + len(MITO) + 2  # the named genes and two others


@dataclass(frozen=True)
class Library:
    """One library of the aggregation, with the hidden rates its cells are drawn with."""

    sample_id: str
    donor: str
    condition: str
    age: int
    sex: str
    n_cells: int
    damaged_share: float
    doublet_rate: float


def design(rng: np.random.Generator, cells_per_library: int) -> tuple[list[Library], dict]:
    """The libraries (donor x condition, in GEM-well order) and each donor's hidden biology."""
    ages = rng.choice(np.arange(22, 80), N_DONORS, replace=False)
    sexes = rng.choice(["F", "M"], N_DONORS)
    biology = {}
    libraries = []
    for index in range(N_DONORS):
        donor, age = f"D{index + 1}", int(ages[index])
        b_share = float(np.clip(0.22 - 0.0025 * (age - 20) + rng.normal(0, 0.012), 0.03, 0.4))
        rest = rng.dirichlet([5.0, 2.5, 1.5]) * (1 - b_share)
        biology[donor] = {"shares": np.array([rest[0], b_share, rest[1], rest[2]]),
                          "response": float(rng.lognormal(np.log(2.0), 0.35)),
                          "monocyte_factor": float(rng.uniform(1.1, 2.2))}
        for condition in CONDITIONS:
            loaded = int(round(cells_per_library * rng.uniform(0.6, 1.4)))
            libraries.append(Library(f"{donor}_{condition}", donor, condition, age, str(sexes[index]),
                                     max(loaded, 8), float(rng.uniform(0.04, 0.24)),
                                     float(np.clip(0.05 * loaded / cells_per_library + rng.normal(0, 0.01),
                                                   0.005, 0.12))))
    return libraries, biology


def gene_names(n_genes: int) -> list[str]:
    """Named genes first (markers, interferon-stimulated, mitochondrial), then `SG<n>`."""
    named = [g for group in MARKERS for g in group] + list(ISGS) + list(MITO)
    if n_genes < MIN_GENES:
        raise ValueError(f"an aggr matrix needs at least {MIN_GENES} genes, got {n_genes}")
    return named + [f"SG{number}" for number in range(len(named) + 1, n_genes + 1)]


def simulate(rng: np.random.Generator, n_genes: int, cells_per_library: int) -> tuple[Counts, list[Library]]:
    """The aggregated matrix (genes, then CD3 and CD19 tags; barcodes `<16 bases>-<well>`)."""
    names = gene_names(n_genes)
    index = {name: row for row, name in enumerate(names)}
    libraries, biology = design(rng, cells_per_library)
    log_share = rng.normal(0.0, 1.2, (n_genes, 1)) + np.zeros((1, len(TYPE_NAMES)))
    for kind, markers in enumerate(MARKERS):
        log_share[[index[g] for g in markers], kind] += MARKER_LOG_FOLD
    isg_rows, mito_rows = [index[g] for g in ISGS], [index[g] for g in MITO]
    log_share[mito_rows] = np.log(0.04 / len(MITO)) + np.log(np.exp(log_share).sum(axis=0))  # ~4 % of reads
    blocks, adts, barcodes, seen = [], [], [], []
    for well, library in enumerate(libraries, start=1):
        donor = biology[library.donor]
        n = library.n_cells
        kinds = rng.choice(len(TYPE_NAMES), n, p=donor["shares"])
        partner = rng.choice(len(TYPE_NAMES), n, p=donor["shares"])
        doublet = (rng.random(n) < library.doublet_rate) & (partner != kinds)
        damaged = (rng.random(n) < library.damaged_share) & ~doublet
        shift = np.zeros((n_genes, len(TYPE_NAMES)))
        if library.condition == "stim":
            boost = donor["response"] * np.log(2) * np.array([1.0, 1.0, donor["monocyte_factor"], 1.0])
            shift[isg_rows] = boost
        share = np.exp(log_share + shift)
        share /= share.sum(axis=0)
        profile = share[:, kinds]
        profile[:, doublet] = (profile[:, doublet] + share[:, partner[doublet]]) / 2
        profile[np.ix_(mito_rows, np.flatnonzero(damaged))] *= 8.0
        profile /= profile.sum(axis=0)
        size = rng.lognormal(np.log(UMIS_PER_CELL), 0.45, n) * np.where(doublet, 1.8, 1.0)
        size *= np.where(damaged, 0.35, 1.0)
        mean = profile * size
        blocks.append(scipy.sparse.csc_matrix(
            rng.poisson(mean * rng.gamma(1 / DISPERSION, DISPERSION, mean.shape)).astype(np.int32)))
        positive = np.stack([(kinds == 0) | (doublet & (partner == 0)), (kinds == 1) | (doublet & (partner == 1))])
        adts.append(scipy.sparse.csc_matrix(rng.poisson(25.0 * (1 + 5 * positive)).astype(np.int32)))
        bases = [code[:-2] for code in draw_barcodes(rng, n)]
        if seen:
            reuse = np.flatnonzero(rng.random(n) < SHARED_BARCODES)
            for column in reuse:
                bases[column] = seen[int(rng.integers(len(seen)))]
        order = np.argsort(bases, kind="stable")
        blocks[-1], adts[-1] = blocks[-1][:, order], adts[-1][:, order]
        barcodes += [f"{bases[i]}-{well}" for i in order]
        seen += bases
    genes = scipy.sparse.hstack(blocks, format="csc")
    tags = scipy.sparse.hstack(adts, format="csc")
    if len(set(barcodes)) != len(barcodes):  # one library drew a sequence twice: extremely rare
        raise ValueError("synthetic aggr: a barcode repeats within one library; change the seed")
    ids = [f"SYNG{number:011d}" for number in rng.permutation(n_genes) + 1]
    counts = Counts(feature_ids=ids + [ab_id for _, ab_id in ANTIBODIES],
                    names=names + [name for name, _ in ANTIBODIES],
                    feature_types=["Gene Expression"] * n_genes + ["Antibody Capture"] * len(ANTIBODIES),
                    genomes=["GRCh38"] * n_genes + [""] * len(ANTIBODIES), barcodes=barcodes,
                    matrix=scipy.sparse.vstack([genes, tags], format="csc"))
    return counts, libraries


def write(out_dir: Path, rng: np.random.Generator, n_genes: int, cells_per_library: int) -> None:
    """Write `aggregation.csv` and the aggregated matrix under `out_dir`."""
    counts, libraries = simulate(rng, n_genes, cells_per_library)
    attrs = {"library_ids": np.array([lib.sample_id.encode() for lib in libraries]),
             "original_gem_groups": np.ones(len(libraries), dtype=np.int64)}
    write_v3(out_dir / MATRIX_FILE, counts, attrs)
    with open(out_dir / AGGREGATION_FILE, "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["sample_id", "molecule_h5", "donor", "condition", "age", "sex"])
        for lib in libraries:
            writer.writerow([lib.sample_id, f"/data/runs/{lib.sample_id}/outs/molecule_info.h5",
                             lib.donor, lib.condition, lib.age, lib.sex])
