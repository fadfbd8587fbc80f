"""Annotator reproduction: a boosted-tree teacher distilled into a 12-input linear student.

Method (the gold; the prompt leaves the models to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`).
2. Teacher: a gradient-boosted ensemble per basin on all features, fitted before the test period.
3. Student: per basin, ordinary least squares on 12 conceptual series (soil-bucket runoff and its
   routing, antecedent liquid input, melt, snowpack, season), fitted to the teacher's simulation
   on every day of the scope (the transfer set: training and test forcing) and to the
   observations where they exist (weights 1 : 1).
4. Estimates: the same procedure fitted on the first 80 % of the training days, scored on the rest.

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

import numpy as np
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import featurize, local, median_of, read_query, scores, validation_split

STUDENT_INPUTS = ["runoff_50_ewm_10", "runoff_150_ewm_10", "runoff_400_ewm_10", "runoff_150_ewm_60",
                  "runoff_400_ewm_60", "runoff_50", "liquid_ewm_3", "liquid_ewm_30", "melt",
                  "snowpack", "season_sin", "season_cos"]


def distil(features, q, fit: np.ndarray, predict: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(teacher, student) simulations of the `predict` rows, both fitted on the `fit` rows."""
    everything = np.ones(len(q.obs), dtype=bool)
    teacher = local(features, q.obs, q.basins, max_iter=100)(fit, everything)
    student = np.zeros(len(q.obs))
    for basin in np.unique(q.basins):
        own = q.basins == basin
        x = np.column_stack([np.ones(own.sum()), features.loc[own, STUDENT_INPUTS].to_numpy()])
        labelled = fit[own]
        design = np.vstack([x, x[labelled]])
        target = np.concatenate([teacher[own], q.obs[own][labelled]])
        coef = np.linalg.lstsq(design, target, rcond=None)[0]
        student[own] = x @ coef
    return teacher[predict], np.clip(student[predict], 0.0, None)


def main() -> None:
    """Simulate the test period with teacher and student; write the artifact and answer.json."""
    q = read_query(FORCING)
    features = featurize(q.frame, q.key)
    early, late = validation_split(q.frame["date"], q.train)
    checks = [median_of(scores(q.obs[late], sim, q.basins[late]), "nse")
              for sim in distil(features, q, early, late)]
    teacher, student = distil(features, q, q.train, q.test)
    q.write_rows(q.test, {"qsim_teacher_mm_d": teacher, "qsim_student_mm_d": student})
    write_answer(metrics={"median_nse_teacher": checks[0], "median_nse_student": checks[1]})


if __name__ == "__main__":
    main()
