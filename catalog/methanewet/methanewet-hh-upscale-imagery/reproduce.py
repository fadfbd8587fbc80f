"""Annotator reproduction: upscale half-hourly methane flux to unmonitored sites from imagery + drivers.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; the held-out sites (every interval owed) are listed there.
2. Per interval, driver features (`driver_features`: soil temperature and its growing-season
   pools, water table, local time of day, season, gap-filled meteorology) and the site's static
   predictors: wetland class, latitude, and its imagery statistics (`imagery_attributes`: NDVI
   mean, minimum, maximum and seasonal range, relief).
3. Two estimates, averaged: `pooled_trees`, one gradient-boosted tree ensemble of ln flux pooled
   over the public sites on drivers, class, latitude and imagery (the machine-learning upscaling
   of the network's products), and `transfer_site_models`, every public site's log-linear process
   model applied to the held-out site's drivers and averaged (the process knowledge of each
   monitored site). Their mean is clipped to [0, 3 x the largest observed flux]: a donor's log-linear
   model applied outside its drivers' range grows exponentially (one scope's estimate was 1e110).
4. Report the metrics of one held-out run over the public sites (every third public site hidden).

Deterministic: fixed random_state, no early stopping, single thread.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import write_answer
from methanewet_annotator import KEY, TARGET
from methanewet_halfhourly import driver_features, imagery_attributes, site_attributes
from methanewet_halfhourly_models import pooled_trees, transfer_site_models
from methanewet_runs import check_scores, run_halfhourly_held_out_sites

STATIC = ["site_classification", "lat_deg"]


def imagery_features(frame: pd.DataFrame, sites: pd.DataFrame) -> pd.DataFrame:
    """The drivers plus the sites' class, latitude and imagery attributes (NDVI, relief)."""
    sites = sites.join(imagery_attributes(Path("data"), sites))
    return pd.concat([driver_features(frame, sites),
                      site_attributes(frame, sites, [*STATIC, "ndvi_mean", "ndvi_min", "ndvi_max",
                                                     "ndvi_range", "relief_m"])], axis=1)


def upscaled(frame: pd.DataFrame, features: pd.DataFrame, held: list[str]) -> np.ndarray:
    """Flux of every row of the held-out sites: the mean of the pooled trees and the site models."""
    train = frame[TARGET].notna().to_numpy() & ~frame[KEY].isin(held).to_numpy()
    public = sorted(set(frame[KEY]) - set(held))
    trees = pooled_trees(frame, features, train)
    sites = transfer_site_models(frame, features, held, pd.DataFrame(1.0, index=held, columns=public))
    return 0.5 * trees + 0.5 * np.where(np.isfinite(sites), sites, trees)


def main() -> None:
    """Predict the held-out sites of the query in the current directory; write the artifact."""
    check = run_halfhourly_held_out_sites(upscaled, features=imagery_features, ceiling=3.0)
    write_answer(metrics=check_scores(check, {"rmse_nmol_m2_s": ("rmse", "all"), "r2_median": ("r2", "median")}))


if __name__ == "__main__":
    main()
