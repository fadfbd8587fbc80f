"""Annotator reproduction: fill the null days of daily streamflow records.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks of `prompt.md`; keep only the scope's basins and dates.
2. Work in log space, log(q + eps), eps = 1 % of the basin's mean flow (at least 0.01 mm/d).
   Baseline of a missing day: linear interpolation between the nearest available days before and
   after it (held flat at the ends of the record).
3. A rainfall-runoff model per basin: gradient-boosted trees on forcing-only features (snow and
   soil-bucket routines, antecedent precipitation; the streamflow task's features) fitted to the
   available days in log space; inside a gap its simulation is corrected by its residuals at the
   gap's edges, interpolated across the gap ("model line").
4. Features of a missing day: the baseline, the model line and the raw simulation (relative to the
   baseline), the distances to the gap's edges, the gap's length,
   the mean "donor anomaly" of the other basins of the scope (each donor's log flow on that day
   minus the donor's own linear interpolation between the target's gap-edge days; donors of the
   same HUC-02 region and all donors separately) and the precipitation and temperature since the
   gap began and around the day.
5. A gradient-boosted tree ensemble pooled over the scope's basins learns the departure from the
   baseline. It is trained on pseudo-gaps: runs of 5 to 30 available days (about 20 % of them,
   seeded, two draws), filled as if they were missing (the basin model refitted without them), so
   training sees the same kind of gaps as filling.
6. Fill every null day; report an estimate of the graded metrics from a held-out set of
   pseudo-gaps (a second seeded draw the model was not trained on).

Deterministic: fixed seeds, no early stopping, single thread.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import read_artifact_spec, read_scope, write_answer, write_artifact
from camels_annotator import basin_features, read_timeseries
from camels_gaps import COLUMNS, features, pseudo_gaps, simulate
from metrics import nse
from sklearn.ensemble import HistGradientBoostingRegressor


def main() -> None:
    """Fill the null days of the query in the current directory; write the artifact."""
    scope, artifact = read_scope(), read_artifact_spec()
    frame = read_timeseries(Path("data"), scope, [*COLUMNS, "qobs_mm_d"])
    regions = pd.read_parquet(Path("data/entities.parquet")).astype({"gauge_id": str})
    region = regions.set_index("gauge_id")["huc_02"]
    wide = {c: frame.pivot(index="date", columns="gauge_id", values=c) for c in [*COLUMNS, "qobs_mm_d"]}
    gauges = list(wide["qobs_mm_d"].columns)
    flow = wide["qobs_mm_d"].to_numpy(dtype=float)
    observed = ~np.isnan(flow)
    eps = np.maximum(0.01, 0.01 * np.nanmean(flow, axis=0))
    logs = np.log(np.where(observed, flow, 0.0) + eps)
    same_region = np.equal.outer(region[gauges].to_numpy(), region[gauges].to_numpy())
    forcing = (wide["prcp_mm_d"].fillna(0.0).to_numpy(),
               ((wide["tmax_c"] + wide["tmin_c"]) / 2).fillna(0.0).to_numpy(),
               wide["swe_mm"].fillna(0.0).to_numpy(), wide["qobs_mm_d"].index.dayofyear.to_numpy())
    rng = np.random.default_rng(0)
    train, check, fill = [], [], []
    for b, gauge in enumerate(gauges):
        basin = frame[frame["gauge_id"] == gauge].reset_index(drop=True)
        drivers = basin_features(basin)
        for share, out in ((0.2, train), (0.2, train), (0.1, check)):
            hidden = pseudo_gaps(observed[:, b], share, rng)
            avail_b = observed[:, b] & ~hidden
            sim = simulate(drivers, logs[:, b], avail_b)
            part = features(b, avail_b, logs, observed, same_region, forcing, sim)
            part["target"], part["gauge"] = logs[:, b], gauge
            out.append(part[hidden])
        sim = simulate(drivers, logs[:, b], observed[:, b])
        part = features(b, observed[:, b], logs, observed, same_region, forcing, sim)
        part["gauge"], part["date"], part["eps"] = gauge, wide["qobs_mm_d"].index, eps[b]
        fill.append(part[~observed[:, b]])
    train, check, fill = pd.concat(train), pd.concat(check), pd.concat(fill)
    columns = [c for c in train.columns if c not in ("target", "gauge")]
    model = HistGradientBoostingRegressor(max_iter=150, learning_rate=0.08, max_leaf_nodes=31,
                                          min_samples_leaf=40, early_stopping=False, random_state=0)
    model.fit(train[columns], train["target"] - train["baseline"])
    to_flow = {g: e for g, e in zip(gauges, eps, strict=True)}
    check_sim = np.exp(check["baseline"] + model.predict(check[columns])) - check["gauge"].map(to_flow)
    check_obs = np.exp(check["target"]) - check["gauge"].map(to_flow)
    errors = np.clip(check_sim, 0, None) - check_obs
    check_sim = np.clip(check_sim, 0, None)
    nses = [nse(check_obs[check["gauge"] == g].to_numpy(), check_sim[check["gauge"] == g].to_numpy())
            for g in gauges if check_obs[check["gauge"] == g].std() > 0]
    filled = np.clip(np.exp(fill["baseline"] + model.predict(fill[columns])) - fill["eps"], 0.0, None)
    out = pd.DataFrame({"gauge_id": fill["gauge"].to_numpy(), "date": fill["date"].to_numpy(),
                        "qfill_mm_d": filled.to_numpy()})
    write_artifact(out, artifact)
    write_answer(metrics={"rmse_mm_d": round(float(np.sqrt(np.mean(errors**2))), 6),
                          "nse_masked": round(float(np.median(nses)), 6)})


if __name__ == "__main__":
    main()
