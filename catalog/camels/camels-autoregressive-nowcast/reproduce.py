"""Annotator reproduction: autoregressive short-range forecasts from the last observed flow.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query; forcing-only features per basin-day (`camels_annotator.basin_features`).
2. Training pairs from the record before the forecast period: issue days every other day with an
   observed flow, lead times 1 .. H (H = the forecast period's length); target: the change of
   log flow from the issue day to the lead day. Inputs: lead time, log flow on the issue day and
   its change over the previous 1 and 7 days, liquid water input and PET summed from the issue
   day to the lead day, and the lead day's forcing features.
3. One gradient-boosted ensemble pooled over the basins (log changes are scale-free), then each
   basin's forecast is issued from its last observed day before the forecast period.
4. Estimate: the same model trained on issues before a pseudo forecast period (the H days before
   the real one), forecast from the day before it.

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import boosted, featurize, read_query

DRIVERS = ["liquid", "liquid_ewm_3", "liquid_ewm_7", "melt", "snowpack", "tmean", "pet",
           "runoff_50", "runoff_150_ewm_10", "season_sin", "season_cos"]


def pairs(log_q: np.ndarray, features: np.ndarray, cum: np.ndarray, issues: list[int],
          horizon: int, end: int) -> pd.DataFrame:
    """Input rows of forecasts issued on `issues` for leads 1..horizon (targets where < end)."""
    rows = []
    for s in issues:
        for h in range(1, horizon + 1):
            t = s + h
            if t >= len(log_q):
                break
            rows.append([h, log_q[s], log_q[s] - log_q[max(s - 1, 0)], log_q[s] - log_q[max(s - 7, 0)],
                         cum[t, 0] - cum[s, 0], cum[t, 1] - cum[s, 1], *features[t],
                         log_q[t] - log_q[s] if t < end else np.nan, t])
    columns = ["lead", "log_q", "d1", "d7", "liquid_sum", "pet_sum", *DRIVERS, "target", "day"]
    return pd.DataFrame(rows, columns=columns)


def forecast(q, features: pd.DataFrame, first: pd.Timestamp, horizon: int) -> pd.DataFrame:
    """Forecasts of every basin for the `horizon` days from `first`, trained on earlier issues."""
    train, issue = [], []
    for basin in np.unique(q.basins):
        own = np.flatnonzero(q.basins == basin)
        dates, obs = q.frame["date"].to_numpy()[own], q.obs[own]
        eps = max(0.01, 0.01 * np.nanmean(obs))
        log_q = pd.Series(np.log(obs + eps)).ffill().to_numpy()
        x = features.iloc[own][DRIVERS].to_numpy()
        cum = np.cumsum(features.iloc[own][["liquid", "pet"]].to_numpy(), axis=0)
        end = int(np.searchsorted(dates, np.datetime64(first)))
        seen = [s for s in range(7, end - 1, 2) if not np.isnan(obs[s])]
        part = pairs(log_q, x, cum, seen, horizon, end)
        train.append(part[(part["day"] < end) & part["target"].notna()])
        last = max([s for s in range(end) if not np.isnan(obs[s])], default=end - 1)
        ahead = pairs(log_q, x, cum, [last], end - last + horizon - 1, end)
        ahead = ahead[(ahead["day"] >= end) & (ahead["day"] < end + horizon)]
        issue.append(ahead.assign(row=own[ahead["day"].to_numpy()], base=log_q[last], eps=eps))
    train, issue = pd.concat(train), pd.concat(issue)
    inputs = [c for c in train.columns if c not in ("target", "day")]
    model = boosted(max_iter=150, min_samples_leaf=30).fit(train[inputs], train["target"])
    values = np.exp(issue["base"] + model.predict(issue[inputs])) - issue["eps"]
    return pd.DataFrame({"row": issue["row"].to_numpy(), "qfc": np.clip(values.to_numpy(), 0.0, None)})


def main() -> None:
    """Forecast the withheld days; write the artifact and answer.json."""
    q = read_query(FORCING)
    features = featurize(q.frame, q.key)
    first = pd.Timestamp(q.artifact["rows"]["from"])
    horizon = int(q.test[q.basins == q.basins[0]].sum())
    check = forecast(q, features, first - pd.Timedelta(days=horizon), horizon)
    errors = (check["qfc"].to_numpy() - q.obs[check["row"].to_numpy()])
    errors = errors[~np.isnan(errors)]
    final = forecast(q, features, first, horizon).set_index("row")["qfc"]
    q.write_rows(q.test, {"qfc_mm_d": final.reindex(np.flatnonzero(q.test)).to_numpy()})
    write_answer(metrics={"rmse_mm_d": round(float(np.sqrt(np.mean(errors**2))), 6),
                          "mae_mm_d": round(float(np.mean(np.abs(errors))), 6)})


if __name__ == "__main__":
    main()
