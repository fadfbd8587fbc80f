"""Annotator reproduction: fill artificial gaps of half-hourly methane flux.

Method (the gold; the prompt leaves the method to the agent): `methanewet_runs.fill_halfhourly`,
a per-site log-linear process model of the flux's drivers plus the model's departure from the
observed fluxes at each gap's edges, back-transformed to the mean flux. Every null flux of the
scope is filled; the metrics are estimated on a seeded draw of 1-5-day pseudo-gaps.

Deterministic: fixed seeds, single thread.
"""

from __future__ import annotations

from methanewet_runs import fill_halfhourly

RUN_DAYS = (1.0, 5.0)  # pseudo-gap lengths, days


def main() -> None:
    """Fill the null fluxes of the query in the current directory; write the artifact and answer.json."""
    fill_halfhourly(RUN_DAYS, {"rmse_nmol_m2_s": ("rmse", "all"), "nse_median": ("nse", "median")})


if __name__ == "__main__":
    main()
