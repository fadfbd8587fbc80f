"""Annotator reproduction: which libraries carry an excess of damaged cells?

Method (the gold):
1. Align (see `cells_annotator`): the barcode's GEM-well suffix names its library's row
   (`gem_group`) in `libraries.parquet`. Checkpoint `work/aligned.parquet` (`gem_group`).
2. Feature: each cell's mitochondrial fraction (UMIs of genes named `MT-*` over its
   gene-expression UMIs). Checkpoint `work/features.parquet`.
3. Per library with at least 20 of the query's cells: the share of its cells whose fraction
   exceeds 0.15. The answer: the `sample_id`s of the libraries whose share exceeds 0.10, sorted.
   A library whose share lies within 0.003 of the cut makes the query ambiguous (label fails).
"""

from __future__ import annotations

from annotator_common import read_scope, write_answer, write_checkpoint
from cells_annotator import cell_table

MITO_CUT, SHARE_CUT, MARGIN, MIN_CELLS = 0.15, 0.10, 0.003, 20


def main() -> None:
    cells, _, _ = cell_table(read_scope())
    write_checkpoint("aligned.parquet", cells[["gem_group"]])
    write_checkpoint("features.parquet", cells[["mito_fraction"]])
    flagged = (cells["mito_fraction"] > MITO_CUT).groupby(cells["sample_id"])
    shares = flagged.mean()[flagged.size() >= MIN_CELLS]
    close = shares[(shares - SHARE_CUT).abs() < MARGIN]
    if not close.empty:
        raise SystemExit(f"ambiguous: {dict(close.round(4))} within {MARGIN} of the cut {SHARE_CUT}")
    write_answer(sorted(shares[shares > SHARE_CUT].index.astype(str)))


if __name__ == "__main__":
    main()
