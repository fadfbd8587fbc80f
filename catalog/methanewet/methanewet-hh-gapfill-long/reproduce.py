"""Annotator reproduction: fill long (one to three weeks) gaps in half-hourly methane flux.

Method (the gold; the prompt leaves the method to the agent): `methanewet_runs.fill_halfhourly`
with the median back-transform (the metrics are absolute errors): the per-site log-linear process
model (Q10 temperature response, substrate pools, diurnal harmonics, water-table limitation) plus
its departure from the observed fluxes at the gap's edges, fading with a 2-day time constant:
deep inside a long gap the process model carries the fill. The metrics are estimated on seeded
pseudo-gaps of 7 to 20 days.

Deterministic: fixed seeds, single thread.
"""

from __future__ import annotations

from methanewet_runs import fill_halfhourly

RUN_DAYS = (7.0, 20.0)  # pseudo-gap lengths, days


def main() -> None:
    """Fill the null fluxes of the query in the current directory; write the artifact and answer.json."""
    fill_halfhourly(RUN_DAYS, {"mae_nmol_m2_s": ("mae", "all"), "kge_median": ("kge", "median")}, median=True)


if __name__ == "__main__":
    main()
