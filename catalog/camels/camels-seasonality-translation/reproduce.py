"""Annotator reproduction: monthly streamflow of ungauged basins from their seasonal climate.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query; per basin-day the library's conceptual series (`camels_annotator.basin_features`:
   degree-day snow and melt, Hargreaves PET, soil buckets and their routed runoff), averaged per
   calendar month together with the month's precipitation, PET and the previous two months'
   liquid input (the stores' delay), the calendar month (sine, cosine) and every staged attribute.
2. One gradient-boosted ensemble over the gauged basins' months (target: monthly mean flow /
   the basin's mean precipitation), applied to the ungauged basins' months; each day of a month
   carries the month's prediction.
3. Estimate: the same model with a seeded 30 % of the gauged basins treated as ungauged.

Deterministic: fixed seeds and `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import (
    ATTRIBUTES,
    boosted,
    featurize,
    held_out_masks,
    precipitation_scale,
    pseudo_ungauged,
    read_entities,
    read_query,
)
from metrics import nse

MONTHLY = ["prcp_mm_d", "pet", "liquid", "melt", "snowpack", "runoff_150_ewm_60", "runoff_400_ewm_60",
           "soil_150", "liquid_ewm_120"]


def monthly_table(q, features: pd.DataFrame, entities: pd.DataFrame) -> pd.DataFrame:
    """One row per basin-month: monthly means of the conceptual series, lags, season, attributes."""
    table = features[MONTHLY].assign(basin=q.basins, month=q.frame["date"].dt.to_period("M").to_numpy(),
                                     q=q.obs, scale=precipitation_scale(q.frame, q.key))
    months = table.groupby(["basin", "month"]).mean().reset_index()
    for lag in (1, 2):
        months[f"liquid_lag{lag}"] = months.groupby("basin")["liquid"].shift(lag)
    calendar = months["month"].map(lambda m: m.month).to_numpy()
    months["season_sin"], months["season_cos"] = np.sin(2 * np.pi * calendar / 12), np.cos(2 * np.pi * calendar / 12)
    static = [c for c in ATTRIBUTES if c in entities.columns]
    return months.join(entities[static].astype(float), on="basin")


def predict(months: pd.DataFrame, gauged: list[str], wanted: list[str]) -> pd.Series:
    """Monthly mean flow of the `wanted` basins' months, by a model of the `gauged` basins' months."""
    inputs = [c for c in months.columns if c not in ("basin", "month", "q", "scale")]
    fit = months["basin"].isin(gauged) & months["q"].notna()
    model = boosted(max_iter=150, min_samples_leaf=10).fit(months.loc[fit, inputs],
                                                           months.loc[fit, "q"] / months.loc[fit, "scale"])
    rows = months["basin"].isin(wanted)
    values = np.clip(model.predict(months.loc[rows, inputs]), 0.0, None) * months.loc[rows, "scale"]
    return pd.Series(values.to_numpy(), index=pd.MultiIndex.from_frame(months.loc[rows, ["basin", "month"]]))


def main() -> None:
    """Predict the ungauged basins' monthly flow; write the artifact and answer.json."""
    q = read_query(FORCING)
    entities = read_entities(Path("data"), q.scope)
    months = monthly_table(q, featurize(q.frame, q.key), entities)
    held, public = held_out_masks(q)
    check = pseudo_ungauged(q.basins, public)
    gauged = sorted(set(q.basins[public & ~check]))
    estimate = predict(months, gauged, sorted(set(q.basins[check])))
    observed = months.set_index(["basin", "month"])["q"].reindex(estimate.index)
    nses, r2s = [], []
    for _, part in pd.DataFrame({"o": observed, "s": estimate}).dropna().groupby(level=0):
        if part["o"].std() > 0:
            nses.append(nse(part["o"].to_numpy(), part["s"].to_numpy()))
            r2s.append(np.corrcoef(part["o"], part["s"])[0, 1] ** 2)
    final = predict(months, sorted(set(q.basins[public])), sorted(set(q.basins[held])))
    keys = pd.MultiIndex.from_arrays([q.basins[held], q.frame["date"][held].dt.to_period("M").to_numpy()])
    q.write_rows(held, {"qsim_mm_d": final.reindex(keys).to_numpy()})
    write_answer(metrics={"monthly_nse": round(float(np.median(nses)), 6),
                          "monthly_r2": round(float(np.median(r2s)), 6)})


if __name__ == "__main__":
    main()
