"""Annotator reproduction: a conceptual snow + soil + routing model calibrated per basin.

Method (the gold):
1. Read the query; run the library's conceptual components per basin
   (`camels_annotator.basin_features`): a degree-day snow routine, Hargreaves PET, soil buckets of
   50, 150 and 400 mm (HBV-like nonlinear runoff) and linear-reservoir routing of their runoff
   (exponential filters of 10 and 60 days), plus the routed liquid input.
2. Calibration: the simulated flow is a non-negative combination of those routed store outflows
   (which bucket, which reservoir, how much of each); the weights are fitted per basin by
   non-negative least squares on the days before the test period.
3. Estimates: the same calibration on the first 80 % of the training days, scored on the rest.
"""

from __future__ import annotations

import numpy as np
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import featurize, median_of, read_query, scores, validation_split
from scipy.optimize import nnls

STORES = [f"runoff_{c}{s}" for c in (50, 150, 400) for s in ("", "_ewm_10", "_ewm_60")]
STORES += ["liquid_ewm_30", "liquid_ewm_120", "melt"]


def calibrated(features, q, fit: np.ndarray, predict: np.ndarray) -> np.ndarray:
    """Simulation of the `predict` rows by the per-basin non-negative store weights."""
    sim = np.zeros(len(q.obs))
    for basin in np.unique(q.basins[predict]):
        own = q.basins == basin
        x = features.loc[own, STORES].to_numpy()
        weights, _ = nnls(x[fit[own]], q.obs[own][fit[own]])
        sim[own] = x @ weights
    return sim[predict]


def main() -> None:
    """Calibrate, simulate the test period; write the artifact and answer.json."""
    q = read_query(FORCING)
    features = featurize(q.frame, q.key)
    early, late = validation_split(q.frame["date"], q.train)
    check = scores(q.obs[late], calibrated(features, q, early, late), q.basins[late])
    q.write_rows(q.test, {"qsim_mm_d": calibrated(features, q, q.train, q.test)})
    write_answer(metrics={"mean_nse": round(float(check["nse"].mean()), 6), "median_kge": median_of(check, "kge")})


if __name__ == "__main__":
    main()
