"""Annotator reproduction: July greenness against the soil water of the eight weeks before it.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre (its mean
   daily soil water from 20 May to 14 July of the period's year) and the July NDVI pixels whose
   centres fall in its bounds. Checkpoint `work/aligned.parquet`.
2. Greenness: the mean of the cell's valid July NDVI pixels (cells without one are left out).
   Checkpoint `work/features.parquet`.
3. Pearson r across the cells; its sampling uncertainty from 500 resamples of the cells
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`. A period that does not hold the 56
   days is discarded.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from gridcells_annotator import grid_series, read_cells, zonal

LAYER = "ndvi_20200715"
DAYS = 56


def main() -> None:
    """Align, compute the features and the correlation, write the answer and checkpoints."""
    scope = read_scope()
    cells = read_cells(scope)
    year = scope["start"][:4]
    soil = grid_series(cells, "soil_water", first=f"{year}-05-20", last=f"{year}-07-14")
    if len(soil) != DAYS:
        raise SystemExit(f"the period holds {len(soil)} of the {DAYS} days from 20 May to 14 July")
    ndvi = zonal(cells, LAYER)
    write_checkpoint("aligned.parquet", pd.DataFrame({"n_pixels": ndvi["n_pixels"], "soil_water_mm": soil.mean()}))
    write_checkpoint("features.parquet", pd.DataFrame({"ndvi": ndvi["mean"]}))
    table = pd.DataFrame({"ndvi": ndvi["mean"], "soil": soil.mean()}).dropna()
    if len(table) < 8:
        raise SystemExit(f"only {len(table)} cells with a valid July NDVI pixel")
    x, y = table["ndvi"].to_numpy(), table["soil"].to_numpy()
    r = float(np.corrcoef(x, y)[0, 1])
    write_answer(round(r, 6), bootstrap(len(x), lambda i: np.corrcoef(x[i], y[i])[0, 1]))


if __name__ == "__main__":
    main()
