"""Annotator reproduction: the latitude trend of the annual temperature range across grid cells.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre; its daily
   air temperature over the period. Checkpoint `work/aligned.parquet` (the cell's mean).
2. The annual range: the largest minus the smallest calendar-month mean of the daily series.
   Checkpoint `work/features.parquet`.
3. OLS slope of the range on the centre latitude (with an intercept), per 10 degrees; its sampling
   uncertainty from 500 resamples of the cells (`numpy.random.default_rng(0)`) in
   `work/bootstrap.json`. A period without all twelve calendar months has no annual cycle and is
   discarded.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import bootstrap, ols, read_scope, write_answer, write_checkpoint
from gridcells_annotator import grid_series, read_cells

PER_DEGREES = 10.0


def main() -> None:
    """Align, compute each cell's annual range and its latitude trend, write answer and checkpoints."""
    cells = read_cells(read_scope())
    tair = grid_series(cells, "tair")
    if tair.index.month.nunique() < 12:
        raise SystemExit(f"the period holds {tair.index.month.nunique()} calendar months, not 12")
    monthly = tair.groupby(tair.index.month).mean()
    annual_range = (monthly.max() - monthly.min()).rename("range_c")
    write_checkpoint("aligned.parquet", pd.DataFrame({"tair_c": tair.mean()}))
    write_checkpoint("features.parquet", pd.DataFrame({"range_c": annual_range}))
    table = pd.DataFrame({"range": annual_range, "lat": cells["lat_deg"]}).dropna()
    if len(table) < 8 or table["lat"].nunique() < 3:
        raise SystemExit(f"{len(table)} cells over {table['lat'].nunique()} latitudes: no trend to fit")
    a, lat = table["range"].to_numpy(), table["lat"].to_numpy()
    slope = float(ols(a, lat)[1]) * PER_DEGREES
    write_answer(round(slope, 6), bootstrap(len(a), lambda i: ols(a[i], lat[i])[1] * PER_DEGREES))


if __name__ == "__main__":
    main()
