"""Annotator reproduction: fill hidden half-hourly methane fluxes with even skill across wetland classes.

Method (the gold; the prompt leaves the method to the agent): `methanewet_runs.fill_halfhourly`:
a log-linear process model fitted per site (so that every wetland class gets its own
temperature, water-table and diurnal response instead of the pooled average one), corrected by
the model's departure from the observed fluxes around each gap. The metrics are estimated on
seeded pseudo-gaps of 1 to 10 days.

Deterministic: fixed seeds, single thread.
"""

from __future__ import annotations

from methanewet_runs import fill_halfhourly

RUN_DAYS = (1.0, 10.0)  # pseudo-gap lengths, days


def main() -> None:
    """Fill the null fluxes of the query in the current directory; write the artifact and answer.json."""
    fill_halfhourly(RUN_DAYS, {"kge_mean": ("kge", "mean"), "rmse_nmol_m2_s": ("rmse", "all")})


if __name__ == "__main__":
    main()
