"""Annotator reproduction: the cell most colder than latitude and elevation predict.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre (its mean
   daily air temperature) and the relief pixels whose centres fall in its bounds. Checkpoint
   `work/aligned.parquet`.
2. Elevation: the mean of the cell's valid relief pixels (cells without one are left out). OLS of
   temperature on elevation (m) and centre latitude with an intercept; each cell's residual
   (observed minus fitted). Checkpoint `work/features.parquet`.
3. The answer is the centre of the cell with the most negative residual. A query whose runner-up
   residual is within 5 % of it is ambiguous (a pixel-assignment detail could swap them) and is
   discarded.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import ols, read_scope, write_answer, write_checkpoint
from gridcells_annotator import grid_means, read_cells, top_cell, zonal

MIN_LEAD = 0.05


def main() -> None:
    """Align, fit the regression, write the coldest-anomaly cell's centre and the checkpoints."""
    cells = read_cells(read_scope())
    relief = zonal(cells, "relief")
    tair = grid_means(cells, "tair")
    write_checkpoint("aligned.parquet", pd.DataFrame({"n_pixels": relief["n_pixels"], "tair_c": tair}))
    table = pd.DataFrame({"t": tair, "z": relief["mean"], "lat": cells["lat_deg"]}).dropna()
    if len(table) < 8:
        raise SystemExit(f"only {len(table)} cells with a valid relief pixel")
    t, z, lat = (table[c].to_numpy() for c in ("t", "z", "lat"))
    beta = ols(t, z, lat)
    residual = pd.Series(t - (beta[0] + beta[1] * z + beta[2] * lat), index=table.index, name="residual_c")
    write_checkpoint("features.parquet", pd.DataFrame({"elevation_m": relief["mean"], "residual_c": residual}))
    top = cells.loc[top_cell(-residual, MIN_LEAD)]
    write_answer([round(float(top["lat_deg"]), 6), round(float(top["lon_deg"]), 6)])


if __name__ == "__main__":
    main()
