"""Annotator reproduction: distil an ensemble of site models into one response for unmonitored sites.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; the held-out sites (every interval owed) are listed there.
2. Teachers: per public site, its log-linear process model (soil temperature, growing-season
   pools, diurnal harmonics, water table) fitted on its observed intervals (`transfer_site_models`
   with equal weights applies every teacher to the held-out site's drivers and averages them).
3. Student: per held-out site, one log-linear process model (`process_model`) fitted to the
   teacher ensemble's ln flux on every interval of the site (the transfer set), back-transformed:
   a single compact response that stands in for the whole ensemble.
4. Report the metrics of the same distillation with every third public site held out.

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer
from methanewet_annotator import KEY, score
from methanewet_halfhourly_models import process_model, transfer_site_models
from methanewet_runs import run_halfhourly_held_out_sites


def distilled(frame: pd.DataFrame, features: pd.DataFrame, held: list[str]) -> np.ndarray:
    """The student's flux on every row of the held-out sites (NaN elsewhere)."""
    public = sorted(set(frame[KEY]) - set(held))
    teacher = transfer_site_models(frame, features, held, pd.DataFrame(1.0, index=held, columns=public))
    rows = frame[KEY].isin(held).to_numpy() & np.isfinite(teacher)
    student = process_model(frame, features, rows, np.log(np.where(rows, teacher, 1.0)))
    return np.where(rows, np.exp(student), np.nan)


def main() -> None:
    """Predict the held-out sites of the query in the current directory; write the artifact."""
    check = run_halfhourly_held_out_sites(distilled, ceiling=3.0)
    write_answer(metrics={"r2_median": score(check, "observed", "filled", "r2", "median")})


if __name__ == "__main__":
    main()
