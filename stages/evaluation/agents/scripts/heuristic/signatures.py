"""A library of standard signatures of an entity's time series (and of its ratio to a driver).

Each signature has a name pattern. When the prompt names signatures (identifiers in backticks)
that match patterns of the library, those are computed, in the prompt's order: the space in
which a partition is judged is then the one the prompt declares. Otherwise the default set is used.
Parameters written in the prompt (the offset of a log, `ln(0.01 + ...)`; the multiple of the
median that makes a high value, `above 9 times the median`) override the defaults.

Signatures (x the target over its observed days, p the first precipitation-like driver):
ln(mean x); mean x / mean p; the Lyne-Hollick baseflow index (alpha 0.925, gaps interpolated);
days per year above k x median(x); days per year below 0.2 x mean(x); ln(offset + the q % quantile);
the q % quantile; coefficient of variation; lag-1 autocorrelation; share of zero days.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

PRECIPITATION = ("prcp", "precip", "ppt", "pr_", "rain", "p_mm")
DEFAULT = ("log_mean", "ratio", "baseflow_index", "high_freq", "log_q5", "log_q95", "cv", "lag1_autocorr")
ALPHA = 0.925


@dataclass(frozen=True)
class Settings:
    """Parameters of the signatures, read from the prompt where it states them."""

    offset: float = 0.01
    high_multiple: float = 9.0


def read_settings(text: str) -> Settings:
    """The log offset and the high-value multiple the prompt states (defaults otherwise)."""
    offset = re.search(r"ln\(\s*([0-9]*\.?[0-9]+)\s*\+", text)
    multiple = re.search(r"above\s+([0-9]*\.?[0-9]+)\s*(?:times|x)\s+the\s+median", text)
    return Settings(float(offset.group(1)) if offset else 0.01,
                    float(multiple.group(1)) if multiple else 9.0)


def baseflow_index(flow: np.ndarray, alpha: float = ALPHA) -> float:
    """Lyne-Hollick one-pass filter: baseflow / total of a gap-free series."""
    quick, base = 0.0, 0.0
    for t in range(len(flow)):
        if t > 0:
            quick = min(max(alpha * quick + (1 + alpha) / 2 * (flow[t] - flow[t - 1]), 0.0), flow[t])
        base += flow[t] - quick
    total = flow.sum()
    return float(base / total) if total > 0 else float("nan")


def _quantile(name: str) -> float:
    return float(re.search(r"(\d+)$", name).group(1)) / 100


Signature = Callable[[pd.Series, pd.Series | None, Settings, str], float]
LIBRARY: tuple[tuple[str, Signature], ...] = (
    (r"^log_\w*mean$", lambda x, p, s, n: float(np.log(x.dropna().mean()))),
    (r"ratio$", lambda x, p, s, n: float(x.dropna().mean() / p[x.notna()].mean())
        if p is not None else float("nan")),
    (r"baseflow|^bfi$", lambda x, p, s, n: baseflow_index(
        x.interpolate(limit_direction="both").to_numpy(dtype=float))),
    (r"^high_\w*freq", lambda x, p, s, n: float(
        (x.dropna() > s.high_multiple * x.dropna().median()).mean() * 365.25)),
    (r"^low_\w*freq", lambda x, p, s, n: float((x.dropna() < 0.2 * x.dropna().mean()).mean() * 365.25)),
    (r"^log_\w*?\d+$", lambda x, p, s, n: float(np.log(s.offset + x.dropna().quantile(_quantile(n))))),
    (r"^\w*?q\d+$", lambda x, p, s, n: float(x.dropna().quantile(_quantile(n)))),
    (r"^cv$|variation", lambda x, p, s, n: float(x.dropna().std(ddof=0) / x.dropna().mean())),
    (r"autocorr", lambda x, p, s, n: float(x.dropna().autocorr(1))),
    (r"^zero_\w*freq", lambda x, p, s, n: float((x.dropna() == 0).mean())),
)


def lookup(name: str) -> Signature | None:
    """The library signature whose pattern matches a name, or None."""
    return next((function for pattern, function in LIBRARY if re.search(pattern, name)), None)


def declared(identifiers: list[str]) -> list[str]:
    """The prompt's identifiers that name library signatures (in order), else the default set."""
    names = [name for name in identifiers if lookup(name) is not None]
    return names if len(names) >= 2 else list(DEFAULT)


def signature_table(frames: dict[str, pd.DataFrame], target: str, precipitation: str | None,
                    names: list[str], settings: Settings) -> pd.DataFrame:
    """Raw signatures, one row per entity (sorted), one column per name."""
    rows = {}
    for entity, rows_of in sorted(frames.items()):
        x = rows_of[target].astype(float).reset_index(drop=True)
        p = rows_of[precipitation].astype(float).reset_index(drop=True) if precipitation else None
        rows[entity] = {name: lookup(name)(x, p, settings, name) if x.notna().sum() > 1 else np.nan
                        for name in names}
    return pd.DataFrame.from_dict(rows, orient="index")[names]


def standardise(table: pd.DataFrame) -> pd.DataFrame:
    """z-scores with the population sd; constant or undefined columns become 0."""
    table = table.replace([np.inf, -np.inf], np.nan)
    table = table.fillna(table.mean()).fillna(0.0)
    spread = table.std(ddof=0)
    return ((table - table.mean()) / spread.where(spread > 0, 1.0)).fillna(0.0)
