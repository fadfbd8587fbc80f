"""Annotator reproduction: fill dropped-out daily precipitation from co-located evidence.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query. Evidence on each basin-day: the same day's precipitation of the other basins
   (same HUC-02 region, and all), rescaled by the basin's mean precipitation; the day's diurnal
   temperature range, radiation and vapour pressure and their departures from a 15-day running
   mean (wet days are cloudy and cool); the day-to-day change of log streamflow on the day and
   the next (a rise follows rain); season.
2. One gradient-boosted ensemble pooled over the scope's basins, fitted on every day with
   public precipitation (target: precipitation / the basin's mean), applied to the null days.
3. Estimate: the same model fitted without a seeded 10 % of runs of 3-15 public days, scored there.

Deterministic: fixed seeds and `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import boosted, others_mean, read_entities, read_query


def evidence(frame: pd.DataFrame, key: str, regions: pd.Series, scale: np.ndarray) -> pd.DataFrame:
    """Predictors of each basin-day's precipitation (none reads its own precipitation)."""
    by_basin = frame.groupby(key)
    dtr = frame["tmax_c"] - frame["tmin_c"]
    log_q = np.log(frame["qobs_mm_d"] + 0.01)
    out = {"region_p": others_mean(frame, key, "prcp_mm_d", regions), "all_p": others_mean(frame, key, "prcp_mm_d"),
           "dtr": dtr, "doy_sin": np.sin(2 * np.pi * frame["date"].dt.dayofyear / 365.25),
           "doy_cos": np.cos(2 * np.pi * frame["date"].dt.dayofyear / 365.25),
           "dq_today": log_q - by_basin["qobs_mm_d"].shift(1).add(0.01).pipe(np.log),
           "dq_next": by_basin["qobs_mm_d"].shift(-1).add(0.01).pipe(np.log) - log_q,
           "tmean": (frame["tmax_c"] + frame["tmin_c"]) / 2}
    for column, values in (("dtr", dtr), ("srad", frame["srad_w_m2"]), ("vp", frame["vp_pa"])):
        smooth = values.groupby(frame[key]).transform(lambda s: s.rolling(15, center=True, min_periods=1).mean())
        out[f"{column}_anomaly"] = values - smooth
    features = pd.DataFrame(out, index=frame.index)
    features["region_p"] /= scale
    features["all_p"] /= scale
    return features


def pseudo_gaps(available: np.ndarray, basins: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Runs of 3-15 available days per basin covering about 10 % of them."""
    hidden = np.zeros(len(available), dtype=bool)
    for basin in np.unique(basins):
        rows = np.flatnonzero(basins == basin)
        target = int(0.1 * available[rows].sum())
        while (hidden[rows] & available[rows]).sum() < target:
            length = int(rng.integers(3, 16))
            first = int(rng.integers(0, max(len(rows) - length, 0) + 1))
            hidden[rows[first:first + length]] = True
    return hidden & available


def main() -> None:
    """Fill the null precipitation days; write the artifact and answer.json."""
    q = read_query(FORCING, target="prcp_mm_d")
    regions = read_entities(Path("data"), q.scope)["huc_02"].astype(str)
    scale = np.maximum(q.frame.groupby(q.key)["prcp_mm_d"].transform("mean").to_numpy(), 0.1)
    features = evidence(q.frame.assign(qobs_mm_d=read_query(["qobs_mm_d"]).obs), q.key, regions, scale)
    public = ~np.isnan(q.obs)
    check = pseudo_gaps(public, q.basins, np.random.default_rng(0))
    fit = public & ~check
    estimate = np.clip(boosted(max_iter=150).fit(features[fit], q.obs[fit] / scale[fit])
                       .predict(features[check]) * scale[check], 0.0, None)
    r2s = [np.corrcoef(q.obs[check & (q.basins == b)], estimate[q.basins[check] == b])[0, 1] ** 2
           for b in np.unique(q.basins[check])]
    model = boosted(max_iter=150).fit(features[public], q.obs[public] / scale[public])
    missing = ~public
    filled = np.clip(model.predict(features[missing]) * scale[missing], 0.0, None)
    q.write_rows(missing, {"prcp_fill_mm_d": filled})
    write_answer(metrics={"rmse_mm_d": round(float(np.sqrt(np.mean((estimate - q.obs[check]) ** 2))), 6),
                          "median_r2": round(float(np.nanmedian(r2s)), 6)})


if __name__ == "__main__":
    main()
