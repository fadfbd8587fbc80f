"""Annotator reproduction: correlation of July greenness and climatic wetness across grid cells.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre, and the July
   NDVI pixels whose centres fall in its bounds. Checkpoint `work/aligned.parquet`.
2. Features: mean daily precipitation over the period; mean of the cell's valid NDVI pixels (clouds
   and the mosaic's nodata left out). Cells without a valid pixel are left out. Checkpoint
   `work/features.parquet`.
3. Pearson r across the cells; its sampling uncertainty from 500 resamples of the cells
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from gridcells_annotator import grid_means, read_cells, zonal


def main() -> None:
    """Align, compute the features and the correlation, write the answer and checkpoints."""
    cells = read_cells(read_scope())
    ndvi = zonal(cells, "ndvi_20200715")
    precip = grid_means(cells, "precip")
    write_checkpoint("aligned.parquet", pd.DataFrame({"n_pixels": ndvi["n_pixels"], "precip_mm_d": precip}))
    write_checkpoint("features.parquet", pd.DataFrame({"ndvi": ndvi["mean"]}))
    table = pd.DataFrame({"ndvi": ndvi["mean"], "precip": precip}).dropna()
    if len(table) < 8:
        raise SystemExit(f"only {len(table)} cells with a valid July NDVI pixel")
    x, y = table["ndvi"].to_numpy(), table["precip"].to_numpy()
    r = float(np.corrcoef(x, y)[0, 1])
    replicates = bootstrap(len(x), lambda i: np.corrcoef(x[i], y[i])[0, 1])
    write_answer(round(r, 6), replicates)


if __name__ == "__main__":
    main()
