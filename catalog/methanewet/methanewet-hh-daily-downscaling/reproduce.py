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
import pandas as pd
from methanewet_annotator import (
    KEY,
    TARGET,
    read_artifact_spec,
    read_daily,
    read_scope,
    read_sites,
    rmse,
    score,
    write_answer,
    write_artifact,
)
from methanewet_halfhourly import TIME, downscale_daily, driver_features, owed_rows, read_halfhourly


def main() -> None:
    """Downscale the test period of the query in the current directory; write the artifact."""
    prompt, data = Path("prompt.md"), Path("data")
    scope, artifact = read_scope(prompt), read_artifact_spec(prompt)
    frame, sites, daily = read_halfhourly(data, scope), read_sites(data, scope), read_daily(data, scope)
    features, test = driver_features(frame, sites), owed_rows(frame, artifact)
    column = next(iter(artifact["columns"]))
    values = downscale_daily(frame, features, daily, sites, test)[test]
    write_artifact(artifact, frame.loc[test, [KEY, TIME]].assign(**{column: values}))
    times = frame[TIME]
    early = (times >= times[test].min() - (times.max() - times[test].min())).to_numpy() & ~test
    public = frame[~test].reset_index(drop=True)
    check = downscale_daily(public, features[~test].reset_index(drop=True), daily, sites, early[~test])
    keep = early[~test] & public[TARGET].notna().to_numpy()
    check = pd.DataFrame({KEY: public.loc[keep, KEY], "observed": public.loc[keep, TARGET],
                          "filled": np.asarray(check)[keep]})
    write_answer({"rmse_nmol_m2_s": rmse(check["observed"], check["filled"]),
                  "nse_median": score(check, "observed", "filled", "nse", "median")})


if __name__ == "__main__":
    main()
