"""Annotator reproduction: fill hidden half-hourly methane fluxes with even skill across wetland classes.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's sites.
2. Driver features per interval (`driver_features`): soil temperature and its growing-season
   pools, water table below / above the surface, local time of day, season, gap-filled
   meteorology.
3. `fill_gaps`: a log-linear process model fitted per site (so that every wetland class gets its
   own temperature, water-table and diurnal response instead of the pooled average one),
   corrected by the model's departure from the observed fluxes around each gap.
4. Fill every null flux; report the metrics of seeded pseudo-gaps of 1 to 10 days.

Deterministic: fixed seeds, single thread.
"""

from __future__ import annotations

from methanewet_annotator import rmse, score, write_answer
from methanewet_runs import run_halfhourly_fill

RUN_DAYS = (1.0, 10.0)  # pseudo-gap lengths, days


def main() -> None:
    """Fill the null fluxes of the query in the current directory; write the artifact."""
    check = run_halfhourly_fill(RUN_DAYS)
    write_answer({"kge_mean": score(check, "observed", "filled", "kge", "mean"),
                  "rmse_nmol_m2_s": rmse(check["observed"], check["filled"])})


if __name__ == "__main__":
    main()
