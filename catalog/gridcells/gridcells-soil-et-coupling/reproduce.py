"""Annotator reproduction: how tightly evapotranspiration follows soil water, day by day.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre; its daily
   soil water and actual evapotranspiration over the period. Checkpoint `work/aligned.parquet` (the
   cell's means over the period).
2. Each cell's Pearson correlation between its daily soil water and its daily AET. Checkpoint
   `work/features.parquet`.
3. The answer is the mean of the cells' correlations; its sampling uncertainty from 500 resamples
   of the cells (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from gridcells_annotator import column_correlations, grid_series, read_cells


def main() -> None:
    """Align, correlate each cell's daily series, write the mean correlation and checkpoints."""
    cells = read_cells(read_scope())
    soil, aet = grid_series(cells, "soil_water"), grid_series(cells, "aet")
    coupling = column_correlations(soil, aet)
    write_checkpoint("aligned.parquet", pd.DataFrame({"soil_water_mm": soil.mean(), "aet_mm_d": aet.mean()}))
    write_checkpoint("features.parquet", pd.DataFrame({"r": coupling}))
    values = coupling.dropna().to_numpy()
    if len(values) < 8:
        raise SystemExit(f"only {len(values)} cells with a defined correlation")
    write_answer(round(float(values.mean()), 6), bootstrap(len(values), lambda i: values[i].mean()))


if __name__ == "__main__":
    main()
