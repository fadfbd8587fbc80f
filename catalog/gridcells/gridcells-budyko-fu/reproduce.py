"""Annotator reproduction: Fu's Budyko-curve parameter fitted across the scope's grid cells.

Method (the gold):
1. Align (see `gridcells_annotator`): each scope cell's NetCDF grid cell by its centre; its mean
   daily precipitation, PET and AET over the period. Checkpoint `work/aligned.parquet`.
2. Features: the index of dryness PET/P and the evaporative index AET/P (cells whose mean
   precipitation is not positive are left out). Checkpoint `work/features.parquet`.
3. Least squares of AET/P against Fu's curve 1 + D - (1 + D^w)^(1/w) over w in [1, 20] (bounded
   Brent search, `xatol` 1e-6); its sampling uncertainty from 500 resamples of the cells
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`. A fit at either bound of the range
   has no interior optimum and the query is discarded.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from gridcells_annotator import grid_means, read_cells
from scipy.optimize import minimize_scalar

BOUNDS = (1.0, 20.0)


def fu(dryness: np.ndarray, w: float) -> np.ndarray:
    """Fu's (1981) curve: the evaporative index at an index of dryness, for parameter w."""
    return 1.0 + dryness - (1.0 + dryness**w) ** (1.0 / w)


def fit(evaporative: np.ndarray, dryness: np.ndarray) -> float:
    """The least-squares w within BOUNDS."""
    result = minimize_scalar(lambda w: float(((evaporative - fu(dryness, w)) ** 2).sum()), bounds=BOUNDS,
                             method="bounded", options={"xatol": 1e-6})
    return float(result.x)


def main() -> None:
    """Align, compute the indices, fit w, write the answer and checkpoints."""
    cells = read_cells(read_scope())
    means = pd.DataFrame({"precip_mm_d": grid_means(cells, "precip"), "pet_mm_d": grid_means(cells, "pet"),
                          "aet_mm_d": grid_means(cells, "aet")})
    write_checkpoint("aligned.parquet", means)
    p = means["precip_mm_d"].where(means["precip_mm_d"] > 0)
    features = pd.DataFrame({"dryness_index": means["pet_mm_d"] / p, "evaporative_index": means["aet_mm_d"] / p})
    write_checkpoint("features.parquet", features)
    table = features.dropna()
    if len(table) < 8:
        raise SystemExit(f"only {len(table)} cells with positive precipitation")
    e, d = table["evaporative_index"].to_numpy(), table["dryness_index"].to_numpy()
    w = fit(e, d)
    if min(w - BOUNDS[0], BOUNDS[1] - w) < 1e-3:
        raise SystemExit(f"the fit lies at a bound of the range: w = {w:.4f}")
    write_answer(round(w, 6), bootstrap(len(e), lambda i: fit(e[i], d[i])))


if __name__ == "__main__":
    main()
