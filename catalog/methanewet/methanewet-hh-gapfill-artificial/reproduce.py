"""Annotator reproduction: fill artificial gaps of half-hourly methane flux.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's sites (the public table is already cut
   to the scope's period).
2. Driver features per half-hour (`driver_features`): shallow soil temperature and its 1-day,
   7-day and 45-day growing-season pools, the water table below / above the surface, the local
   time of day, the season and the gap-filled meteorology. The flux itself is never a driver.
3. `fill_gaps`: per site, a log-linear process model fitted by ridge regression on the observed
   intervals (Q10 temperature response, substrate pools, diurnal harmonics, water-table
   limitation), plus the model's departure from the observed fluxes at the gap's edges (the
   day-to-day anomaly the drivers miss), interpolated across the gap and fading with a 2-day
   time constant (`edge_anomaly`); back-transformed to the mean flux.
4. Fill every null flux of the scope; report the metrics of a seeded draw of 1-5-day pseudo-gaps.

Deterministic: fixed seeds, single thread.
"""

from __future__ import annotations

from methanewet_annotator import rmse, score, write_answer
from methanewet_runs import run_halfhourly_fill

RUN_DAYS = (1.0, 5.0)  # pseudo-gap lengths, days


def main() -> None:
    """Fill the null fluxes of the query in the current directory; write the artifact."""
    check = run_halfhourly_fill(RUN_DAYS)
    write_answer({"rmse_nmol_m2_s": rmse(check["observed"], check["filled"]),
                  "nse_median": score(check, "observed", "filled", "nse", "median")})


if __name__ == "__main__":
    main()
