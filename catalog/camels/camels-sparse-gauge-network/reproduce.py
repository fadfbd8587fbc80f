"""Annotator reproduction: ungauged basins from forcing, location and the gauged neighbours' flow.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`), the
   staged location, elevation and area, and the neighbours' signal: on each day the mean over
   the other gauged basins (same HUC-02 region, and all) of their flow divided by their own mean
   flow, with its 1-day lag.
2. One gradient-boosted ensemble over the gauged basins' observed days, on runoff scaled by each
   basin's mean precipitation, applied to every day of the ungauged basins.
3. Estimate: the same model with a seeded 30 % of the gauged basins treated as ungauged (their
   flow removed from the neighbours' signal too).

Deterministic: fixed seeds and `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from annotator_common import write_answer
from camels_models import others_mean, pooled, precipitation_scale, run_ungauged


def simulation(q, base, regions, gauged: np.ndarray, predict: np.ndarray) -> np.ndarray:
    """Pooled simulation of the `predict` rows using only the `gauged` rows' streamflow."""
    flow = np.where(gauged, q.obs, np.nan)
    relative = q.frame.assign(rel=flow / q.frame.assign(f=flow).groupby(q.key)["f"].transform("mean"))
    everyone = np.nan_to_num(others_mean(relative, q.key, "rel"), nan=1.0)  # 1: a mean day
    region = others_mean(relative, q.key, "rel", regions)
    features = base.assign(region_flow=np.where(np.isnan(region), everyone, region), all_flow=everyone)
    features["region_flow_lag1"] = features.groupby(q.basins)["region_flow"].shift(1)
    return pooled(features, q.obs, precipitation_scale(q.frame, q.key), max_iter=150)(gauged, predict)


def main() -> None:
    """Simulate the ungauged basins with the neighbours' signal; write the artifact and answer.json."""
    estimate, errors = run_ungauged(
        lambda q, features, entities: partial(simulation, q, features, entities["huc_02"].astype(str)))
    write_answer(metrics={"mean_kge": round(float(estimate["kge"].mean()), 6),
                          "rmse_mm_d": round(float(np.sqrt(np.mean(errors**2))), 6)})


if __name__ == "__main__":
    main()
