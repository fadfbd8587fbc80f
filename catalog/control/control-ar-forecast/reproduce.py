"""Annotator reproduction: Box-Jenkins forecasts of each series from its own past.

Method (the gold; the prompt leaves the method to the agent):
1. Per series, over the public days: deterministic terms (constant; linear trend; annual harmonic)
   plus AR(p) errors, p = 0..3, terms and p chosen jointly by BIC (`control_series.fit_series`);
   a white-noise series gets its mean.
2. Forecast the test days: the deterministic part plus the AR recursion from the last residuals.
3. Estimate of the metrics: the same on the public record, forecasting its last test-length days
   from the days before them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from control_annotator import read_query, rmse, write_outputs
from control_series import fit_series, forecast


def forecasts(history: pd.DataFrame, dates: pd.Series) -> np.ndarray:
    """Forecasts of y on `dates` from the model fitted to `history` (date, y)."""
    model = fit_series(history["date"], history["y"].to_numpy(dtype=float))
    return forecast(model, history, dates)


def main() -> None:
    scope, artifact, series, _ = read_query()
    key = scope["entity_key"]
    first = pd.Timestamp(artifact["rows"]["from"])
    rows, obs, sim = [], [], []
    for entity, group in series.groupby(key, sort=True):
        public, test = group[group["date"] < first], group[group["date"] >= first]
        rows.append(pd.DataFrame({key: entity, "date": test["date"], "y_forecast": forecasts(public, test["date"])}))
        past, check = public.iloc[:-len(test)], public.iloc[-len(test):]
        obs.append(check["y"].to_numpy())
        sim.append(forecasts(past, check["date"]))
    obs, sim = np.concatenate(obs), np.concatenate(sim)
    write_outputs(pd.concat(rows, ignore_index=True), artifact,
                  {"rmse": rmse(obs, sim), "mae": float(np.mean(np.abs(obs - sim)))})


if __name__ == "__main__":
    main()
