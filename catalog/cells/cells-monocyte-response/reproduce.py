"""Annotator reproduction: is the interferon response stronger outside the T cells?

Method (the gold):
1. Align (see `cells_annotator`): the barcode's GEM-well suffix names its library (donor,
   condition); the antibody tags are told apart from genes of the same name by feature type.
   Checkpoint `work/aligned.parquet` (`stimulated`, `adt_cd3`, `adt_cd19`).
2. Features: each cell's ISG score and its ADT class (T: CD3 above 80 and CD19 not; CD3-CD19-:
   neither above 80). Checkpoint `work/features.parquet` (`isg_score`, `is_t`, `is_double_negative`).
3. Per donor with both conditions and both classes: log2(stimulated / control mean ISG score) of
   its CD3-CD19- cells minus that of its T cells; the answer is the mean over donors. 500 resamples
   of cells (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from cells_annotator import cell_table, log2_response


def contrast(cells: pd.DataFrame) -> float:
    other = log2_response(cells[cells["cell_class"] == "double_negative"])
    t_cells = log2_response(cells[cells["cell_class"] == "T"])
    both = other.index.intersection(t_cells.index)
    if both.empty:
        raise ValueError("no donor with both classes in both conditions")
    return float((other[both] - t_cells[both]).mean())


def main() -> None:
    cells, _, _ = cell_table(read_scope())
    cells["is_t"] = (cells["cell_class"] == "T").astype(int)
    cells["is_double_negative"] = (cells["cell_class"] == "double_negative").astype(int)
    write_checkpoint("aligned.parquet", cells[["stimulated", "adt_cd3", "adt_cd19"]])
    write_checkpoint("features.parquet", cells[["isg_score", "is_t", "is_double_negative"]])
    write_answer(round(contrast(cells), 6), bootstrap(len(cells), lambda i: contrast(cells.iloc[i])))


if __name__ == "__main__":
    main()
