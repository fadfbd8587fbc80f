"""Annotator reproduction: evapotranspiration of the greener against the browner half of the cells.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre (its mean
   daily actual evapotranspiration over the period) and the October NDVI pixels whose centres fall
   in its bounds. Checkpoint `work/aligned.parquet`.
2. Greenness: the mean of the cell's valid October NDVI pixels (cells without one are left out).
   Checkpoint `work/features.parquet`.
3. Cells above the median greenness against the others: difference of mean AET (mm/d). Its
   sampling uncertainty from 500 resamples of the cells (`numpy.random.default_rng(0)`, the median
   re-taken in each) in `work/bootstrap.json`.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import read_scope, write_checkpoint
from gridcells_annotator import grid_means, read_cells, write_median_split, zonal

LAYER = "ndvi_20201015"


def main() -> None:
    """Align, compute greenness and AET, write the contrast and checkpoints."""
    cells = read_cells(read_scope())
    ndvi = zonal(cells, LAYER)
    aet = grid_means(cells, "aet")
    write_checkpoint("aligned.parquet", pd.DataFrame({"n_pixels": ndvi["n_pixels"], "aet_mm_d": aet}))
    write_checkpoint("features.parquet", pd.DataFrame({"ndvi": ndvi["mean"]}))
    write_median_split(aet, ndvi["mean"], "a valid October NDVI pixel")


if __name__ == "__main__":
    main()
