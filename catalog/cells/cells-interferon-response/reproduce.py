"""Annotator reproduction: the effect of interferon-beta stimulation on interferon-stimulated genes.

Method (the gold):
1. Align (see `cells_annotator`): each barcode's GEM-well suffix names its library's row
   (`gem_group`) in `libraries.parquet`, which gives the donor and the condition. Checkpoint
   `work/aligned.parquet` (`stimulated`: 1 for a cell of a stimulated library, else 0).
2. Feature: each cell's ISG score, the UMIs of the eight interferon-stimulated genes over its
   gene-expression UMIs. Checkpoint `work/features.parquet`.
3. Per donor with both conditions, log2 of the mean score of stimulated over control cells; the
   answer is the mean over donors. Uncertainty: 500 resamples of cells
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from cells_annotator import cell_table, log2_response


def main() -> None:
    cells, _, _ = cell_table(read_scope())
    write_checkpoint("aligned.parquet", cells[["stimulated"]])
    write_checkpoint("features.parquet", cells[["isg_score"]])
    effect = float(log2_response(cells).mean())
    write_answer(round(effect, 6), bootstrap(len(cells), lambda i: log2_response(cells.iloc[i]).mean()))


if __name__ == "__main__":
    main()
