"""Annotator reproduction: the snow-fraction effect on the runoff ratio, holding aridity fixed.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre; its daily
   precipitation, air temperature, PET and runoff over the period. Checkpoint
   `work/aligned.parquet` (the cell's mean daily precipitation, PET and runoff).
2. Features: runoff ratio (total runoff / total precipitation), snow fraction (precipitation on
   days with tair < 0 degC / total precipitation), aridity index (total PET / total
   precipitation). Cells without precipitation are left out. Checkpoint `work/features.parquet`.
3. OLS of the runoff ratio on the snow fraction and the aridity index with an intercept; the answer
   is the snow-fraction coefficient, its sampling uncertainty from 500 resamples of the cells
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`. A scope whose snow fractions vary by
   less than 0.02 (sd) has no snow contrast to estimate from and is discarded.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import bootstrap, ols, read_scope, write_answer, write_checkpoint
from gridcells_annotator import grid_series, read_cells

MIN_SNOW_SD = 0.02


def main() -> None:
    """Align, compute the three per-cell features, fit the regression, write answer and checkpoints."""
    cells = read_cells(read_scope())
    precip, tair = grid_series(cells, "precip"), grid_series(cells, "tair")
    pet, runoff = grid_series(cells, "pet"), grid_series(cells, "runoff")
    write_checkpoint("aligned.parquet", pd.DataFrame({"precip_mm_d": precip.mean(), "pet_mm_d": pet.mean(),
                                                      "runoff_mm_d": runoff.mean()}))
    total = precip.sum().where(precip.sum() > 0)
    features = pd.DataFrame({"snow_fraction": precip.where(tair < 0.0, 0.0).sum() / total,
                             "runoff_ratio": runoff.sum() / total, "aridity_index": pet.sum() / total})
    write_checkpoint("features.parquet", features)
    table = features.dropna()
    if len(table) < 8:
        raise SystemExit(f"only {len(table)} cells with precipitation")
    if table["snow_fraction"].std() < MIN_SNOW_SD:
        raise SystemExit(f"no snow contrast: snow-fraction sd {table['snow_fraction'].std():.4f}")
    q, s, a = (table[c].to_numpy() for c in ("runoff_ratio", "snow_fraction", "aridity_index"))
    coefficient = float(ols(q, s, a)[1])
    write_answer(round(coefficient, 6), bootstrap(len(q), lambda i: ols(q[i], s[i], a[i])[1]))


if __name__ == "__main__":
    main()
