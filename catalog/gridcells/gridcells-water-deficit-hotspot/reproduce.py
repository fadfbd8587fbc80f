"""Annotator reproduction: the scope's cell with the largest climatic water deficit.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre; its mean
   daily potential and actual evapotranspiration over the period. Checkpoint `work/aligned.parquet`.
2. The climatic water deficit: mean daily PET minus mean daily AET (mm/d). Checkpoint
   `work/features.parquet`.
3. The answer is the centre of the cell with the largest deficit. A query whose runner-up is within
   2 % of it is ambiguous and is discarded.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import read_scope, write_answer, write_checkpoint
from gridcells_annotator import grid_means, read_cells, top_cell

MIN_LEAD = 0.02


def main() -> None:
    """Align, compute each cell's deficit, write the top cell's centre and the checkpoints."""
    cells = read_cells(read_scope())
    pet, aet = grid_means(cells, "pet"), grid_means(cells, "aet")
    deficit = (pet - aet).rename("deficit_mm_d")
    write_checkpoint("aligned.parquet", pd.DataFrame({"pet_mm_d": pet, "aet_mm_d": aet}))
    write_checkpoint("features.parquet", pd.DataFrame({"deficit_mm_d": deficit}))
    top = cells.loc[top_cell(deficit, MIN_LEAD)]
    write_answer([round(float(top["lat_deg"]), 6), round(float(top["lon_deg"]), 6)])


if __name__ == "__main__":
    main()
