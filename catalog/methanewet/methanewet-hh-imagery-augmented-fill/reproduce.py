"""Annotator reproduction: fill gaps of half-hourly methane flux with imagery-augmented inputs.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's sites.
2. Per interval, the driver features (`driver_features`: soil temperature and its growing-season
   pools, water table, local time of day, season, gap-filled meteorology), augmented with each
   site's static predictors: wetland class, latitude and its imagery statistics
   (`imagery_attributes`: NDVI mean, minimum, maximum and seasonal range, relief).
3. Two fills, averaged: `fill_gaps` (a log-linear process model per site, corrected by its
   departure from the observed fluxes around the gap) and `pooled_trees` (a boosted tree ensemble
   of ln flux pooled over the sites on the augmented inputs, which carries the information of the
   sites with long records over to the gaps where a site's own record is thin).
4. Fill every null flux; report the metrics of seeded pseudo-gaps of 2 to 10 days.

Deterministic: fixed seeds and random_state, no early stopping, single thread.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from annotator_common import write_answer
from methanewet_annotator import TARGET
from methanewet_halfhourly import driver_features, imagery_attributes, site_attributes, steps_per_day
from methanewet_halfhourly_models import fill_gaps, pooled_trees, pseudo_gaps
from methanewet_runs import check_rows, check_scores, read_halfhourly_query, write_rows

STATIC = ["site_classification", "lat_deg", "ndvi_mean", "ndvi_min", "ndvi_max", "ndvi_range", "relief_m"]
RUN_DAYS = (2.0, 10.0)  # pseudo-gap lengths, days


def augmented_fill(frame: pd.DataFrame, features: pd.DataFrame, augmented: pd.DataFrame):
    """The mean of the per-site process fill and the pooled imagery-augmented trees."""
    observed = frame[TARGET].notna().to_numpy()
    return 0.5 * fill_gaps(frame, features) + 0.5 * pooled_trees(frame, augmented, observed)


def main() -> None:
    """Fill the null fluxes of the query in the current directory; write the artifact and answer.json."""
    _, artifact, frame, sites = read_halfhourly_query()
    sites = sites.join(imagery_attributes(Path("data"), sites))
    features = driver_features(frame, sites)
    augmented = pd.concat([features, site_attributes(frame, sites, STATIC)], axis=1)
    gaps = frame[TARGET].isna().to_numpy()
    write_rows(artifact, frame, gaps, augmented_fill(frame, features, augmented)[gaps])
    hidden = pseudo_gaps(frame, ~gaps, 0.15, RUN_DAYS, steps_per_day(frame), seed=7)
    sim = augmented_fill(frame.assign(**{TARGET: frame[TARGET].where(~hidden)}), features, augmented)
    check = check_rows(frame, hidden, sim)
    write_answer(metrics=check_scores(check, {"rmse_nmol_m2_s": ("rmse", "all"), "nse_median": ("nse", "median")}))


if __name__ == "__main__":
    main()
