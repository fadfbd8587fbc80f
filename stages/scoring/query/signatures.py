"""The benchmark's signature space: where a partition of basins is graded (silhouette).

An agent that clusters basins chooses its own features, but its partition is graded in this fixed
space, so it cannot pick a space that flatters its silhouette. The prompt of a `signatures` task
states these definitions (see `SIGNATURE_DEFINITIONS`), computed per basin over the scope's days:

- `log_q_mean`: ln of the mean daily streamflow (mm/d) over observed days;
- `runoff_ratio`: mean streamflow / mean precipitation over the days with observed streamflow;
- `baseflow_index`: Lyne & Hollick (1979) one-pass digital filter, alpha = 0.925, on the series with
  gaps filled by linear interpolation (ends held): quick flow f_t = alpha f_{t-1} + (1 + alpha) / 2
  (q_t - q_{t-1}), clipped to [0, q_t], f_0 = 0; BFI = sum(q - f) / sum(q);
- `high_q_freq`: days per year with streamflow above 9 times the median daily flow;
- `log_q5` and `log_q95`: ln(0.01 + the 5 % and the 95 % quantile of daily streamflow).

Each column is then standardised across the scope's basins (z-score, population sd); a column with
zero spread becomes 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

BFI_ALPHA = 0.925
HIGH_FLOW_MULTIPLE = 9.0
SIGNATURE_DEFINITIONS = {
    "log_q_mean": "ln(mean daily streamflow over observed days, mm/d)",
    "runoff_ratio": "mean streamflow / mean precipitation, over days with observed streamflow",
    "baseflow_index": (
        "Lyne-Hollick one-pass filter, alpha = 0.925, on the streamflow series with gaps filled by "
        "linear interpolation (ends held): f_t = alpha*f_(t-1) + (1+alpha)/2*(q_t - q_(t-1)) clipped "
        "to [0, q_t], f_0 = 0; BFI = sum(q - f) / sum(q)"),
    "high_q_freq": "days per year with streamflow above 9 x the median daily streamflow",
    "log_q5": "ln(0.01 + 5 % quantile of daily streamflow)",
    "log_q95": "ln(0.01 + 95 % quantile of daily streamflow)",
}


def baseflow_index(flow: np.ndarray, alpha: float = BFI_ALPHA) -> float:
    """Baseflow index of a gap-free series by the Lyne-Hollick one-pass filter."""
    quick = np.zeros_like(flow)
    for t in range(1, len(flow)):
        value = alpha * quick[t - 1] + (1 + alpha) / 2 * (flow[t] - flow[t - 1])
        quick[t] = min(max(value, 0.0), flow[t])
    return float((flow - quick).sum() / flow.sum())


def basin_signatures(flow: pd.Series, prcp: pd.Series) -> dict[str, float]:
    """The raw (unstandardised) signatures of one basin from its daily series in date order."""
    observed = flow.notna()
    q = flow[observed].to_numpy(dtype=float)
    filled = flow.interpolate(limit_direction="both").to_numpy(dtype=float)
    median = np.median(q)
    return {
        "log_q_mean": float(np.log(q.mean())),
        "runoff_ratio": float(q.mean() / prcp[observed].mean()),
        "baseflow_index": baseflow_index(filled),
        "high_q_freq": float((q > HIGH_FLOW_MULTIPLE * median).sum() / len(q) * 365.25),
        "log_q5": float(np.log(0.01 + np.quantile(q, 0.05))),
        "log_q95": float(np.log(0.01 + np.quantile(q, 0.95))),
    }


def signature_space(timeseries: pd.DataFrame, key: str, flow: str, prcp: str) -> pd.DataFrame:
    """Standardised signatures, one row per entity (sorted), indexed by the entity key.

    Raises:
        ValueError: If an entity has fewer than 30 observed days (its signatures are undefined).
    """
    rows = {}
    for entity, group in timeseries.sort_values([key, "date"]).groupby(key, sort=True):
        if group[flow].notna().sum() < 30:
            raise ValueError(f"{key} {entity}: fewer than 30 observed days of {flow}")
        rows[str(entity)] = basin_signatures(group[flow].reset_index(drop=True),
                                             group[prcp].reset_index(drop=True))
    raw = pd.DataFrame.from_dict(rows, orient="index")[list(SIGNATURE_DEFINITIONS)]
    spread = raw.std(ddof=0)
    scaled = (raw - raw.mean()) / spread.where(spread > 0, 1.0)
    scaled.index.name = key
    return scaled
