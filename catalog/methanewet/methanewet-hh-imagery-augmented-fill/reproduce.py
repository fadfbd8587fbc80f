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
from methanewet_annotator import (
    KEY,
    TARGET,
    read_artifact_spec,
    read_scope,
    read_sites,
    rmse,
    score,
    write_answer,
    write_artifact,
)
from methanewet_halfhourly import (
    TIME,
    driver_features,
    fill_gaps,
    imagery_attributes,
    pooled_trees,
    pseudo_gaps,
    read_halfhourly,
    site_attributes,
    steps_per_day,
)

STATIC = ["site_classification", "lat_deg", "ndvi_mean", "ndvi_min", "ndvi_max", "ndvi_range", "relief_m"]
RUN_DAYS = (2.0, 10.0)  # pseudo-gap lengths, days


def augmented_fill(frame: pd.DataFrame, features: pd.DataFrame, augmented: pd.DataFrame):
    """The mean of the per-site process fill and the pooled imagery-augmented trees."""
    observed = frame[TARGET].notna().to_numpy()
    return 0.5 * fill_gaps(frame, features) + 0.5 * pooled_trees(frame, augmented, observed)


def main() -> None:
    """Fill the null fluxes of the query in the current directory; write the artifact."""
    prompt, data = Path("prompt.md"), Path("data")
    scope, artifact = read_scope(prompt), read_artifact_spec(prompt)
    frame, sites = read_halfhourly(data, scope), read_sites(data, scope)
    sites = sites.join(imagery_attributes(data, sites))
    features = driver_features(frame, sites)
    augmented = pd.concat([features, site_attributes(frame, sites, STATIC)], axis=1)
    gaps = frame[TARGET].isna().to_numpy()
    column = next(iter(artifact["columns"]))
    filled = augmented_fill(frame, features, augmented)[gaps]
    write_artifact(artifact, frame.loc[gaps, [KEY, TIME]].assign(**{column: filled}))
    hidden = pseudo_gaps(frame, ~gaps, 0.15, RUN_DAYS, steps_per_day(frame), seed=7)
    sim = augmented_fill(frame.assign(**{TARGET: frame[TARGET].where(~hidden)}), features, augmented)
    check = pd.DataFrame({KEY: frame.loc[hidden, KEY], "observed": frame.loc[hidden, TARGET],
                          "filled": sim[hidden]})
    write_answer({"rmse_nmol_m2_s": rmse(check["observed"], check["filled"]),
                  "nse_median": score(check, "observed", "filled", "nse", "median")})


if __name__ == "__main__":
    main()
