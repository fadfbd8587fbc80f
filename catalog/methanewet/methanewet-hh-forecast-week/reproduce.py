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

from methanewet_annotator import rmse, score, write_answer
from methanewet_runs import run_halfhourly_forecast


def main() -> None:
    """Forecast the test period of the query in the current directory; write the artifact."""
    check = run_halfhourly_forecast()
    write_answer({"rmse_nmol_m2_s": rmse(check["observed"], check["filled"]),
                  "nse_median": score(check, "observed", "filled", "nse", "median")})


if __name__ == "__main__":
    main()
