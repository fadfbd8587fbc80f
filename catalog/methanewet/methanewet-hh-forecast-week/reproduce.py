"""Annotator reproduction: forecast the next week of half-hourly methane flux from its drivers.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; the owed rows are every interval from the test day on.
2. Driver features per interval (`driver_features`): shallow soil temperature, its 1-, 7- and
   45-day growing-season pools, the water table below / above the surface, the local time of day,
   the season and the gap-filled meteorology (the drivers of the test week are known: a forecast
   with perfect weather).
3. `forecast`: per site, a log-linear process model fitted by ridge regression on the observed
   intervals before the test period, plus the site's anomaly of the last observed day (the
   model's mean departure from the fluxes), decaying with a two-day time constant into the
   test week (the day-to-day anomaly is autocorrelated); back-transformed to the mean flux.
4. Report the metrics of the same forecast made one test-period length earlier on observed data.

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

from pathlib import Path

from methanewet_annotator import (
    KEY,
    read_artifact_spec,
    read_scope,
    read_sites,
    rmse,
    score,
    write_answer,
    write_artifact,
)
from methanewet_halfhourly import TIME, driver_features, forecast, owed_rows, read_halfhourly, validate_forecast


def main() -> None:
    """Forecast the test period of the query in the current directory; write the artifact."""
    prompt, data = Path("prompt.md"), Path("data")
    scope, artifact = read_scope(prompt), read_artifact_spec(prompt)
    frame, sites = read_halfhourly(data, scope), read_sites(data, scope)
    features, test = driver_features(frame, sites), owed_rows(frame, artifact)
    column = next(iter(artifact["columns"]))
    values = forecast(frame, features, test)[test]
    write_artifact(artifact, frame.loc[test, [KEY, TIME]].assign(**{column: values}))
    check = validate_forecast(frame, features, test)
    write_answer({"rmse_nmol_m2_s": rmse(check["observed"], check["filled"]),
                  "nse_median": score(check, "observed", "filled", "nse", "median")})


if __name__ == "__main__":
    main()
