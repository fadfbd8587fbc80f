"""Annotator reproduction: distil a pooled tree ensemble into a per-site process response.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; the owed rows are every interval from the test day on.
2. Teacher: `pooled_trees`, a boosted tree ensemble of ln flux pooled over the scope's sites on
   the driver features (`driver_features`) plus the site's identity, class and latitude, fitted
   on the observed intervals before the test period.
3. Transfer set: the teacher's predictions on every interval of the scope (observed, gaps and the
   test period: only drivers are needed). Student: per site, the six-term log-linear process
   model (`process_model`: soil temperature, growing-season pools, diurnal harmonics, water
   table) fitted to the teacher's ln flux on the transfer set (soft targets instead of the noisy
   observations), then corrected by the last observed day's anomaly (`decayed_anomaly`).
4. Report the metrics of the same distillation one test-period length earlier.

Deterministic: fixed random_state, no early stopping, single thread.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer
from methanewet_annotator import KEY, TARGET
from methanewet_halfhourly import TIME, driver_features, owed_rows, site_attributes, steps_per_day
from methanewet_halfhourly_models import back_transform, decayed_anomaly, log_flux, pooled_trees, process_model
from methanewet_runs import check_rows, check_scores, read_halfhourly_query, write_rows


def distilled(frame: pd.DataFrame, sites: pd.DataFrame, test: np.ndarray) -> np.ndarray:
    """The student's flux of every row (teacher fitted on the observed rows before `test`)."""
    features = driver_features(frame, sites)
    identity = pd.DataFrame({"site": frame[KEY].astype("category").cat.codes.astype(float)}, index=frame.index)
    teacher_features = pd.concat([features, identity,
                                  site_attributes(frame, sites, ["site_classification", "lat_deg"])], axis=1)
    flux = frame[TARGET].to_numpy(dtype=float)
    known = ~np.isnan(flux) & ~test
    teacher = pooled_trees(frame, teacher_features, known)
    student = process_model(frame, features, np.ones(len(frame), dtype=bool), np.log(teacher))
    residual = np.where(known, log_flux(flux) - student, np.nan)
    anomaly = decayed_anomaly(frame, residual, known, test, steps_per_day(frame))
    return back_transform(student + anomaly, residual)


def main() -> None:
    """Predict the test period of the query in the current directory; write the artifact and answer.json."""
    _, artifact, frame, sites = read_halfhourly_query()
    test = owed_rows(frame, artifact)
    write_rows(artifact, frame, test, distilled(frame, sites, test)[test])
    public = frame[~test].reset_index(drop=True)
    times = public[TIME]
    early = (times >= times.max() - (frame[TIME].max() - frame.loc[test, TIME].min())).to_numpy()
    sim, keep = distilled(public, sites, early), early & public[TARGET].notna().to_numpy()
    check = check_rows(public, keep, sim)
    write_answer(metrics=check_scores(check, {"mae_nmol_m2_s": ("mae", "all"), "nse_median": ("nse", "median")}))


if __name__ == "__main__":
    main()
