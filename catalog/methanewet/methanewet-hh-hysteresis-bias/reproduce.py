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

from methanewet_annotator import score, write_answer
from methanewet_runs import run_halfhourly_forecast

SHARED = False  # one response pooled over sites with a per-site level, or a model per site


def main() -> None:
    """Predict the test period of the query in the current directory; write the artifact."""
    check = run_halfhourly_forecast(shared=SHARED)
    volume = abs((check["filled"] - check["observed"]).sum()) / check["observed"].sum()
    write_answer({"relative_bias": volume,
                  "kge_median": score(check, "observed", "filled", "kge", "median")})


if __name__ == "__main__":
    main()
