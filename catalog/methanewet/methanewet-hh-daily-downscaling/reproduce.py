"""Annotator reproduction: downscale daily methane flux to half-hours, consistent with the daily means.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; the owed rows are every interval from the test day on,
   where the half-hourly flux is withheld but the daily record (`timeseries`) is public.
2. Driver features per interval (`driver_features`) and a per-site log-linear process model of
   the half-hourly flux fitted on the observed intervals before the test period (`forecast`):
   it gives each interval's share of its day (the diurnal cycle, the soil-temperature response).
3. `downscale_daily`: per local standard day (the daily record's date), the model's intervals are
   scaled so that their mean equals the day's daily flux; a day without a daily value keeps the
   model's forecast.
4. Report the metrics of the same downscaling on the last observed days before the test period.

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from annotator_common import write_answer
from methanewet_annotator import TARGET, read_daily
from methanewet_halfhourly import TIME, driver_features, owed_rows
from methanewet_halfhourly_models import downscale_daily
from methanewet_runs import check_rows, check_scores, read_halfhourly_query, write_rows


def main() -> None:
    """Downscale the test period of the query in the current directory; write the artifact and answer.json."""
    scope, artifact, frame, sites = read_halfhourly_query()
    daily = read_daily(Path("data"), scope)
    features, test = driver_features(frame, sites), owed_rows(frame, artifact)
    write_rows(artifact, frame, test, downscale_daily(frame, features, daily, sites, test)[test])
    times = frame[TIME]
    early = (times >= times[test].min() - (times.max() - times[test].min())).to_numpy() & ~test
    public = frame[~test].reset_index(drop=True)
    check = downscale_daily(public, features[~test].reset_index(drop=True), daily, sites, early[~test])
    check = check_rows(public, early[~test] & public[TARGET].notna().to_numpy(), np.asarray(check))
    write_answer(metrics=check_scores(check, {"rmse_nmol_m2_s": ("rmse", "all"), "nse_median": ("nse", "median")}))


if __name__ == "__main__":
    main()
