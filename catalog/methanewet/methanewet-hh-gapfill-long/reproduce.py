"""Annotator reproduction: fill long (one to three weeks) gaps in half-hourly methane flux.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's sites.
2. Driver features per interval (`driver_features`): shallow soil temperature, its 1-, 7- and
   45-day growing-season pools (the substrate supply that lags temperature), the water table
   below / above the surface, the local time of day, the season and the gap-filled meteorology.
3. `fill_gaps`: per site, a log-linear process model fitted by ridge regression on the observed
   intervals (Q10 temperature response, substrate pools, diurnal harmonics, water-table
   limitation), back-transformed with the median residual (absolute errors), plus the model's
   departure from the observed fluxes at the gap's edges, interpolated across the gap and fading
   with a 2-day time constant (`edge_anomaly`): deep inside a long gap the process model carries
   the fill.
4. Fill every null flux; report the metrics of seeded pseudo-gaps of 7 to 20 days.

Deterministic: fixed seeds, single thread.
"""

from __future__ import annotations

from methanewet_annotator import mae, score, write_answer
from methanewet_runs import run_halfhourly_fill

RUN_DAYS = (7.0, 20.0)  # pseudo-gap lengths, days


def main() -> None:
    """Fill the null fluxes of the query in the current directory; write the artifact."""
    check = run_halfhourly_fill(RUN_DAYS, median=True)
    write_answer({"mae_nmol_m2_s": mae(check["observed"], check["filled"]),
                  "kge_median": score(check, "observed", "filled", "kge", "median")})


if __name__ == "__main__":
    main()
