"""Annotator reproduction: late-season half-hourly methane flux despite seasonal hysteresis.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; the owed rows are every interval from the test day on.
2. Driver features per interval (`driver_features`): shallow soil temperature, its 1-, 7- and
   45-day growing-season pools (the substrate supply that lags temperature: late-season fluxes
   exceed early-season ones at one temperature), the water table below / above the surface, the
   local time of day (plant transport peaks in the early afternoon), the season and the
   gap-filled meteorology.
3. `forecast`: per site, a log-linear process model fitted by ridge regression on the early
   and mid season: the 45-day growing-season pool carries the substrate supply, so the model
   does not read the late season's higher flux at one temperature as a temperature effect,
   plus the anomaly of the last observed day (the model's mean departure from the fluxes),
   decaying with a two-day time constant into the test period; back-transformed to the mean flux.
4. Report the metrics of the same forecast one test-period length earlier on observed data.

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

from pathlib import Path

from methanewet_annotator import KEY, read_artifact_spec, read_scope, read_sites, score, write_answer, write_artifact
from methanewet_halfhourly import TIME, driver_features, forecast, owed_rows, read_halfhourly, validate_forecast

SHARED = False  # one response pooled over sites with a per-site level, or a model per site


def main() -> None:
    """Predict the test period of the query in the current directory; write the artifact."""
    prompt, data = Path("prompt.md"), Path("data")
    scope, artifact = read_scope(prompt), read_artifact_spec(prompt)
    frame, sites = read_halfhourly(data, scope), read_sites(data, scope)
    features, test = driver_features(frame, sites), owed_rows(frame, artifact)
    column = next(iter(artifact["columns"]))
    values = forecast(frame, features, test, shared=SHARED)[test]
    write_artifact(artifact, frame.loc[test, [KEY, TIME]].assign(**{column: values}))
    check = validate_forecast(frame, features, test, shared=SHARED)
    volume = abs((check["filled"] - check["observed"]).sum()) / check["observed"].sum()
    write_answer({"relative_bias": volume,
                  "kge_median": score(check, "observed", "filled", "kge", "median")})


if __name__ == "__main__":
    main()
