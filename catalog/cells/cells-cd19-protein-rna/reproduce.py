"""Annotator reproduction: how closely CD19 protein (antibody tag) follows CD19 RNA across cells.

Method (the gold):
1. Align: the two modalities of each barcode, told apart by feature type (the antibody tag `CD19`
   and the gene `CD19` share a name). Checkpoint `work/aligned.parquet` (`adt_cd19`: the tag's UMIs).
2. Feature: the gene's normalised expression, log1p(CD19 gene UMIs / gene-expression UMIs x 10^4).
   Checkpoint `work/features.parquet` (`cd19_rna`).
3. Spearman correlation of the two across the scope's cells; 500 resamples of cells
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

import numpy as np
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from cells_annotator import GENE_EXPRESSION, cell_table, rows_of
from scipy.stats import spearmanr


def main() -> None:
    cells, matrix, features = cell_table(read_scope())
    gene = matrix[rows_of(features, ["CD19"], GENE_EXPRESSION)[0]].toarray().ravel()
    cells["cd19_rna"] = np.log1p(gene / cells["total_umis"].to_numpy() * 1e4)
    write_checkpoint("aligned.parquet", cells[["adt_cd19"]])
    write_checkpoint("features.parquet", cells[["cd19_rna"]])
    x, y = cells["adt_cd19"].to_numpy(float), cells["cd19_rna"].to_numpy()
    rho = float(spearmanr(x, y).statistic)
    write_answer(round(rho, 6), bootstrap(len(x), lambda i: spearmanr(x[i], y[i]).statistic))


if __name__ == "__main__":
    main()
