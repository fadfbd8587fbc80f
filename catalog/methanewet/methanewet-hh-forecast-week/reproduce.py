"""Annotator reproduction: forecast the next week of half-hourly methane flux from its drivers.

Method (the gold; the prompt leaves the method to the agent): `methanewet_runs.forecast_halfhourly`
with a process model per site. The drivers of the test week are known (a forecast with perfect
weather); the site's anomaly of the last observed day decays into the test week (the day-to-day
anomaly is autocorrelated).

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

from methanewet_runs import forecast_halfhourly


def main() -> None:
    """Predict the test period of the query in the current directory; write the artifact and answer.json."""
    forecast_halfhourly({"rmse_nmol_m2_s": ("rmse", "all"), "nse_median": ("nse", "median")})


if __name__ == "__main__":
    main()
