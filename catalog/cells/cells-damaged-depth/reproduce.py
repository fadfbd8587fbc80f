"""Annotator reproduction: do cells with more mitochondrial reads have fewer transcripts?

Method (the gold):
1. Align (see `cells_annotator`): the barcode's GEM-well suffix names its library; checkpoint
   `work/aligned.parquet` (`gem_group`), and the gene-expression features apart from the tags.
2. Features: each cell's mitochondrial fraction (UMIs of genes named `MT-*` over its
   gene-expression UMIs) and log10 of its gene-expression UMIs. Checkpoint `work/features.parquet`.
3. Spearman correlation of the two across the scope's cells, computed within each library after
   ranking (the mean of the per-library correlations over libraries with at least 20 cells); 500
   resamples of cells (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from cells_annotator import cell_table
from scipy.stats import spearmanr

MIN_CELLS = 20


def mean_within_library(cells: pd.DataFrame) -> float:
    values = [spearmanr(part["mito_fraction"], part["log10_umis"]).statistic
              for _, part in cells.groupby("gem_group") if len(part) >= MIN_CELLS]
    if not values:
        raise ValueError(f"no library with {MIN_CELLS} cells")
    return float(np.mean(values))


def main() -> None:
    cells, _, _ = cell_table(read_scope())
    cells["log10_umis"] = np.log10(cells["total_umis"])
    write_checkpoint("aligned.parquet", cells[["gem_group"]])
    write_checkpoint("features.parquet", cells[["mito_fraction", "log10_umis"]])
    answer = mean_within_library(cells)
    write_answer(round(answer, 6), bootstrap(len(cells), lambda i: mean_within_library(cells.iloc[i])))


if __name__ == "__main__":
    main()
