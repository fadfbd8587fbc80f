"""Annotator reproduction: snow persistence on high versus low ground.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre, and the
   relief pixels whose centres fall in its bounds. Checkpoint `work/aligned.parquet` (with the
   cell's snow persistence: the share of days with SWE >= 1 mm).
2. Elevation: mean of the valid relief pixels (cells without one are left out). Checkpoint
   `work/features.parquet`.
3. Cells above the median elevation against the others: difference of mean snow persistence. Its
   sampling uncertainty from 500 resamples of the cells (`numpy.random.default_rng(0)`, the
   median re-taken in each) in `work/bootstrap.json`. A scope with less than 0.02 of a difference
   has no snow contrast to compare and is discarded.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import read_scope, write_checkpoint
from gridcells_annotator import grid_means, read_cells, write_median_split, zonal

SNOW_MM = 1.0
MIN_CONTRAST = 0.02


def main() -> None:
    """Align, compute snow shares and elevations, write the contrast and checkpoints."""
    cells = read_cells(read_scope())
    relief = zonal(cells, "relief")
    snow = grid_means(cells, "swe", threshold=SNOW_MM)
    write_checkpoint("aligned.parquet", pd.DataFrame({"n_pixels": relief["n_pixels"], "snow_share": snow}))
    write_checkpoint("features.parquet", pd.DataFrame({"elevation_m": relief["mean"]}))
    write_median_split(snow, relief["mean"], "a valid relief pixel", MIN_CONTRAST, "snow")


if __name__ == "__main__":
    main()
