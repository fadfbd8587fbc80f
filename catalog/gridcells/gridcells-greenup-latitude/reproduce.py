"""Annotator reproduction: how the spring green-up (April to July NDVI gain) changes with latitude.

Method (the gold):
1. Align (see `gridcells_annotator`): the April and July NDVI pixels whose centres fall in each
   scope cell's bounds (both layers share the mosaic's grid). Checkpoint `work/aligned.parquet`.
2. Features: each date's mean over the cell's valid pixels (clouds and the mosaic's nodata left
   out); the green-up is July minus April. Cells without a valid pixel on either date are left out.
   Checkpoint `work/features.parquet`.
3. OLS slope of green-up on the cell-centre latitude (with an intercept), per 10 degrees; its
   sampling uncertainty from 500 resamples of the cells (`numpy.random.default_rng(0)`) in
   `work/bootstrap.json`.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import bootstrap, ols, read_scope, write_answer, write_checkpoint
from gridcells_annotator import read_cells, zonal

MIN_CELLS = 8
PER_DEGREES = 10.0


def main() -> None:
    """Align, compute the green-up and its latitude trend, write the answer and checkpoints."""
    cells = read_cells(read_scope())
    april, july = zonal(cells, "ndvi_20200415"), zonal(cells, "ndvi_20200715")
    write_checkpoint("aligned.parquet", pd.DataFrame({"n_pixels": july["n_pixels"]}))
    write_checkpoint("features.parquet", pd.DataFrame({"ndvi_apr": april["mean"], "ndvi_jul": july["mean"]}))
    table = pd.DataFrame({"greenup": july["mean"] - april["mean"], "lat": cells["lat_deg"]}).dropna()
    if len(table) < MIN_CELLS:
        raise SystemExit(f"only {len(table)} cells with valid April and July NDVI pixels")
    if table["lat"].nunique() < 3:
        raise SystemExit("the cells span fewer than three latitudes: no trend to fit")
    greenup, lat = table["greenup"].to_numpy(), table["lat"].to_numpy()
    slope = float(ols(greenup, lat)[1]) * PER_DEGREES
    replicates = bootstrap(len(lat), lambda i: ols(greenup[i], lat[i])[1] * PER_DEGREES)
    write_answer(round(slope, 6), replicates)


if __name__ == "__main__":
    main()
