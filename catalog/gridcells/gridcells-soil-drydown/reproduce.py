"""Annotator reproduction: the warm-season trend of soil water, Sen's slope per cell, averaged.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre; its daily
   soil water on the period's days from 1 April to 30 September. Checkpoint `work/aligned.parquet`
   (the cell's mean soil water over those days).
2. Each cell's Theil-Sen slope (Sen 1968: the median of the slopes between all pairs of days) of
   soil water on the day number, in mm per 30 days. Checkpoint `work/features.parquet`.
3. The answer is the mean of the cells' slopes; its sampling uncertainty from 500 resamples of the
   cells (`numpy.random.default_rng(0)`) in `work/bootstrap.json`. A period with fewer than 90 of
   those days has no warm-season trend to measure and is discarded.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from gridcells_annotator import grid_series, read_cells, theil_sen_slope

MIN_DAYS = 90
DAYS = 30.0


def main() -> None:
    """Align, compute each cell's Sen slope and their mean, write the answer and checkpoints."""
    scope = read_scope()
    cells = read_cells(scope)
    year = scope["start"][:4]
    soil = grid_series(cells, "soil_water", first=f"{year}-04-01", last=f"{year}-09-30")
    if len(soil) < MIN_DAYS or year != scope["end"][:4]:
        raise SystemExit(f"the period holds {len(soil)} days from 1 April to 30 September of one year")
    day = np.asarray((soil.index - soil.index[0]).days, dtype=float)
    slopes = pd.Series({cell: theil_sen_slope(soil[cell].to_numpy(), day) * DAYS for cell in soil.columns},
                       name="slope_mm_30d").rename_axis("cell_id")
    write_checkpoint("aligned.parquet", pd.DataFrame({"soil_water_mm": soil.mean()}))
    write_checkpoint("features.parquet", pd.DataFrame({"slope_mm_30d": slopes}))
    values = slopes.dropna().to_numpy()
    if len(values) < 8:
        raise SystemExit(f"only {len(values)} cells with a soil-water series")
    write_answer(round(float(values.mean()), 6), bootstrap(len(values), lambda i: values[i].mean()))


if __name__ == "__main__":
    main()
