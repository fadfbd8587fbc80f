"""Annotator reproduction: transfer half-hourly flux dynamics to sites known only at the daily scale.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; the held-out sites have no half-hourly flux at all, but
   their daily record (`timeseries`) is public.
2. Source models: per public site, its log-linear process model of the half-hourly flux (soil
   temperature, growing-season pools, diurnal harmonics, water table), fitted on its observed
   intervals; `transfer_site_models` applies every source model to the held-out site's own
   half-hourly drivers and averages them (the transferred sub-daily dynamics).
3. Target adaptation: `scale_to_daily` rescales the transferred series per local day so that its
   mean equals the held-out site's daily flux (the target domain's own, coarse observations).
4. Report the metrics of the same transfer with every third public site held out.

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import read_scope, write_answer
from methanewet_annotator import KEY, read_daily, read_sites
from methanewet_halfhourly_models import scale_to_daily, transfer_site_models
from methanewet_runs import check_scores, run_halfhourly_held_out_sites


def transferred(frame: pd.DataFrame, features: pd.DataFrame, held: list[str], daily: pd.DataFrame,
                sites: pd.DataFrame) -> np.ndarray:
    """Flux of every row of the held-out sites: source models' mean, scaled to the daily means."""
    public = sorted(set(frame[KEY]) - set(held))
    shape = transfer_site_models(frame, features, held, pd.DataFrame(1.0, index=held, columns=public))
    return scale_to_daily(frame, np.where(np.isfinite(shape), shape, 1.0), daily, sites)


def main() -> None:
    """Predict the held-out sites of the query in the current directory; write the artifact and answer.json."""
    data = Path("data")
    scope = read_scope()
    method = partial(transferred, daily=read_daily(data, scope), sites=read_sites(data, scope))
    check = run_halfhourly_held_out_sites(method, ceiling=3.0)
    write_answer(metrics=check_scores(check, {"rmse_nmol_m2_s": ("rmse", "all"), "nse_median": ("nse", "median")}))


if __name__ == "__main__":
    main()
