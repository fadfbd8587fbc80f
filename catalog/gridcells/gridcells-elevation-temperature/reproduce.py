"""Annotator reproduction: the elevation effect on air temperature, holding latitude fixed.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre, and the
   relief pixels whose centres fall in its bounds. Checkpoint `work/aligned.parquet`.
2. Features: mean daily air temperature over the period; mean of the valid relief pixels. Cells
   without a valid pixel are left out. Checkpoint `work/features.parquet`.
3. OLS of temperature on elevation (km) and centre latitude with an intercept; the answer is the
   elevation coefficient (degC/km), its sampling uncertainty from 500 resamples of the cells
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import bootstrap, ols, read_scope, write_answer, write_checkpoint
from gridcells_annotator import grid_means, read_cells, zonal


def main() -> None:
    """Align, compute the features and the regression, write the answer and checkpoints."""
    cells = read_cells(read_scope())
    relief = zonal(cells, "relief")
    tair = grid_means(cells, "tair")
    write_checkpoint("aligned.parquet", pd.DataFrame({"n_pixels": relief["n_pixels"], "tair_c": tair}))
    write_checkpoint("features.parquet", pd.DataFrame({"elevation_m": relief["mean"]}))
    table = pd.DataFrame({"t": tair, "z": relief["mean"] / 1000.0, "lat": cells["lat_deg"]}).dropna()
    if len(table) < 8:
        raise SystemExit(f"only {len(table)} cells with a valid relief pixel")
    t, z, lat = (table[c].to_numpy() for c in ("t", "z", "lat"))
    coefficient = float(ols(t, z, lat)[1])
    replicates = bootstrap(len(t), lambda i: ols(t[i], z[i], lat[i])[1])
    write_answer(round(coefficient, 6), replicates)


if __name__ == "__main__":
    main()
