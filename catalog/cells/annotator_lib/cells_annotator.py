"""Shared code of the `cells` annotator scripts: read the 10x matrix, relate cells to libraries.

A query stages two things apart (see `data/README.md`): `counts.h5` (a Cell Ranger v3 feature-
barcode matrix of the query's cells: gene expression and antibody capture features, barcodes with
their GEM-well suffix) and `libraries.parquet` (one row per library of the aggregation: its
`sample_id`, `gem_group`, donor, condition, ...). Aligning them is the analysis's first step, done
here as the scripts' docstrings state: a barcode `<sequence>-<n>` belongs to the library whose
`gem_group` is n (the 16-base sequence alone is not unique across libraries). Features are told
apart by type: the antibody tag `CD19` is not the gene `CD19`.

Per cell (`cell_table`): its library's columns, `total_umis` (gene-expression UMIs),
`mito_fraction` (UMIs of genes named `MT-*` over total), `isg_score` (UMIs of the
interferon-stimulated genes `ISGS` over total), the antibody counts `adt_cd3`, `adt_cd19`, and
the ADT gate `cell_class`: `T` (CD3 above `ADT_POSITIVE`, CD19 not), `B` (the reverse),
`double_positive`, `double_negative`.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import scipy.sparse

DATA = Path("data")
ISGS = ("ISG15", "IFI6", "IFIT1", "IFIT3", "MX1", "OAS1", "IFITM3", "LY6E")
ADT_POSITIVE = 80  # antibody UMIs: negatives sit near 25, positives near 150
GENE_EXPRESSION, ANTIBODY = "Gene Expression", "Antibody Capture"


def read_matrix(path: Path = DATA / "counts.h5") -> tuple[scipy.sparse.csr_matrix, pd.DataFrame, list[str]]:
    """(features x cells CSR counts, features with name and type, barcodes) of a v3 matrix."""
    with h5py.File(path) as h5:
        group = h5["matrix"]
        shape = tuple(int(v) for v in group["shape"][()])
        matrix = scipy.sparse.csc_matrix((group["data"][()], group["indices"][()], group["indptr"][()]), shape)
        features = pd.DataFrame({key: [v.decode() for v in group["features"][key][()]]
                                 for key in ("id", "name", "feature_type")})
        barcodes = [v.decode() for v in group["barcodes"][()]]
    return matrix.tocsr(), features, barcodes


def rows_of(features: pd.DataFrame, names, feature_type: str) -> list[int]:
    """Row numbers of the named features of one type (every name must be there)."""
    chosen = features[(features["feature_type"] == feature_type) & features["name"].isin(list(names))]
    if len(chosen) != len(set(names)):
        raise SystemExit(f"features {sorted(set(names) - set(chosen['name']))} of type {feature_type} missing")
    return chosen.index.tolist()


def cell_table(scope: dict) -> tuple[pd.DataFrame, scipy.sparse.csr_matrix, pd.DataFrame]:
    """Per scope cell (index `cell_id`): library columns and the figures above; also the matrix."""
    matrix, features, barcodes = read_matrix()
    libraries = pd.read_parquet(DATA / "libraries.parquet")
    cells = pd.DataFrame({"cell_id": barcodes})
    cells["gem_group"] = cells["cell_id"].str.extract(r"-(\d+)$", expand=False).astype("int64")
    cells = cells.merge(libraries, on="gem_group", how="left", validate="many_to_one")
    if cells["sample_id"].isna().any():
        raise SystemExit("a barcode's GEM-well suffix names no library")
    genes = (features["feature_type"] == GENE_EXPRESSION).to_numpy()
    total = np.asarray(matrix[genes].sum(axis=0)).ravel().astype(float)
    mito = features.index[genes & features["name"].str.startswith("MT-").to_numpy()]
    cells["total_umis"] = total
    cells["mito_fraction"] = np.asarray(matrix[mito].sum(axis=0)).ravel() / total
    cells["isg_score"] = np.asarray(matrix[rows_of(features, ISGS, GENE_EXPRESSION)].sum(axis=0)).ravel() / total
    for name in ("CD3", "CD19"):
        cells[f"adt_{name.lower()}"] = matrix[rows_of(features, [name], ANTIBODY)[0]].toarray().ravel()
    cd3, cd19 = cells["adt_cd3"] > ADT_POSITIVE, cells["adt_cd19"] > ADT_POSITIVE
    cells["cell_class"] = np.select([cd3 & ~cd19, cd19 & ~cd3, cd3 & cd19], ["T", "B", "double_positive"],
                                    "double_negative")
    cells["stimulated"] = (cells["condition"] == "stim").astype(int)
    keep = cells["cell_id"].isin(scope["entities"]).to_numpy()
    return cells[keep].set_index("cell_id"), matrix[:, np.flatnonzero(keep)], features


def log2_response(cells: pd.DataFrame) -> pd.Series:
    """Per donor with both conditions: log2(mean ISG score of stimulated / of control cells)."""
    means = cells.groupby(["donor", "stimulated"])["isg_score"].mean().unstack()
    means = means.dropna()
    if means.empty or (means <= 0).any().any():
        raise ValueError("no donor with both conditions and a positive ISG score")
    return np.log2(means[1] / means[0])
