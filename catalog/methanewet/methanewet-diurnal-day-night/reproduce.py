"""Annotator reproduction: how much more methane a wetland emits by day than by night.

Method (the gold):
1. Align: each half-hour's start (`timestamp_start`, UTC) is moved to the site's local standard
   time with its `utc_offset_h` from `entities.parquet`; the day window is local 10:00-16:00, the
   night window 22:00-04:00 (by the interval's start). Checkpoint `work/aligned.parquet` (per
   site: `n_day`, `n_night`, the measured half-hours in each window).
2. Feature: per site with at least 100 measured intervals in each window, log2 of the mean
   measured `fch4_nmol_m2_s` by day over that by night. Checkpoint `work/features.parquet`.
3. The mean over those sites; its uncertainty from 500 resamples of the sites
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint

DATA = Path("data")
MIN_INTERVALS = 100


def main() -> None:
    scope = read_scope()
    sites = pd.read_parquet(DATA / "entities.parquet").set_index("site_id")
    flux = pd.read_parquet(DATA / "halfhourly.parquet", columns=["site_id", "timestamp_start", "fch4_nmol_m2_s"])
    flux = flux[flux["site_id"].isin(scope["entities"]) & flux["fch4_nmol_m2_s"].notna()]
    offset = pd.to_timedelta(flux["site_id"].map(sites["utc_offset_h"]).astype(float), unit="h")
    local = flux["timestamp_start"].dt.tz_convert("UTC").dt.tz_localize(None) + offset
    hour = local.dt.hour + local.dt.minute / 60
    flux = flux.assign(window=np.select([(hour >= 10) & (hour < 16), (hour >= 22) | (hour < 4)],
                                        ["day", "night"], ""))
    windows = flux[flux["window"] != ""].groupby(["site_id", "window"])["fch4_nmol_m2_s"]
    counts = windows.size().unstack(fill_value=0).reindex(columns=["day", "night"], fill_value=0)
    write_checkpoint("aligned.parquet", counts.rename(columns={"day": "n_day", "night": "n_night"})
                     .rename_axis("site_id"))
    means = windows.mean().unstack()
    kept = counts.index[(counts["day"] >= MIN_INTERVALS) & (counts["night"] >= MIN_INTERVALS)]
    means = means.loc[kept]
    if len(means) < 3 or (means <= 0).any().any():
        raise SystemExit(f"{len(means)} sites with enough intervals and positive means")
    ratio = np.log2(means["day"] / means["night"]).rename("log2_day_night")
    write_checkpoint("features.parquet", ratio.to_frame().rename_axis("site_id"))
    values = ratio.to_numpy()
    write_answer(round(float(values.mean()), 6), bootstrap(len(values), lambda i: values[i].mean()))


if __name__ == "__main__":
    main()
