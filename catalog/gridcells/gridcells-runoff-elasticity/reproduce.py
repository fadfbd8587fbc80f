"""Annotator reproduction: the precipitation elasticity of runoff, holding evaporative demand fixed.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre; its mean
   daily precipitation, potential evapotranspiration and runoff over the period. Checkpoint
   `work/aligned.parquet`.
2. Features: the natural logarithms of the three means (cells with a mean that is not positive are
   left out). Checkpoint `work/features.parquet`.
3. OLS of ln(runoff) on ln(precipitation) and ln(PET) with an intercept; the answer is the
   ln(precipitation) coefficient, its sampling uncertainty from 500 resamples of the cells
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import bootstrap, ols, read_scope, write_answer, write_checkpoint
from gridcells_annotator import grid_means, read_cells


def main() -> None:
    """Align, take logs, fit the two-variable elasticity regression, write answer and checkpoints."""
    cells = read_cells(read_scope())
    means = pd.DataFrame({"precip_mm_d": grid_means(cells, "precip"), "pet_mm_d": grid_means(cells, "pet"),
                          "runoff_mm_d": grid_means(cells, "runoff")})
    write_checkpoint("aligned.parquet", means)
    logs = np.log(means.where(means > 0))
    logs.columns = ["ln_precip", "ln_pet", "ln_runoff"]
    write_checkpoint("features.parquet", logs)
    table = logs.dropna()
    if len(table) < 8:
        raise SystemExit(f"only {len(table)} cells with positive precipitation, PET and runoff")
    q, p, e = (table[c].to_numpy() for c in ("ln_runoff", "ln_precip", "ln_pet"))
    elasticity = float(ols(q, p, e)[1])
    write_answer(round(elasticity, 6), bootstrap(len(q), lambda i: ols(q[i], p[i], e[i])[1]))


if __name__ == "__main__":
    main()
