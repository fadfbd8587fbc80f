"""From model truth to FLUXNET-CH4 columns: instrument gaps, noise, gap filling, QC, daily values.

- Gaps: runs of missing intervals (geometric lengths), a few long outages per year (days to weeks),
  boreal winter shutdowns of the methane analyser, and night-time low-turbulence (u*) filtering.
- `X_F` (MDS-like): the mean of measured values at the same time of day within +-7 days; gaps
  longer than `LONG_GAP_DAYS` stay missing. Meteorological `X_F` of the ERA-filled variables (TA,
  SW_IN, LW_IN, VPD, PA, P, WS) is complete: measured where available, else a reanalysis-like value.
- `X_F_ANNOPTLM`: the model flux with a smooth error, never missing. `FCH4_F_ANNOPTLM_QC` is 1 where
  `FCH4_F` exists and 3 where it does not (long gaps), as in the real daily files.
- Daily values from the written half-hours: measured `X` = mean of the available intervals;
  `X_F`, ANN and their uncertainties = mean of a complete day; `P`, `P_F` = sum of a complete day;
  the QC flag = the day's maximum; missing otherwise.
"""

from __future__ import annotations

import numpy as np

from stages.synthesize.fluxnet_ch4.model import Grid, daily_ar1, to_grid

LONG_GAP_DAYS = 14
MDS_WINDOW_DAYS = 7
ERA_FILLED = ("TA", "SW_IN", "LW_IN", "VPD", "PA", "P", "WS")
MDS_FILLED = ("NEE", "H", "LE", "FCH4", "SW_OUT", "LW_OUT", "NETRAD", "PPFD_IN", "RH", "D_SNOW", "G", "WTD")
DECIMALS = {
    "NEE": 4, "H": 3, "LE": 3, "FCH4": 4, "USTAR": 4, "SW_IN": 3, "SW_OUT": 3, "LW_IN": 3, "LW_OUT": 3,
    "NETRAD": 3, "PPFD_IN": 3, "VPD": 4, "RH": 3, "PA": 4, "TA": 3, "P": 3, "D_SNOW": 1, "TS": 3, "G": 3,
    "WTD": 3, "GPP_NT": 4, "RECO_NT": 4, "GPP_DT": 4, "RECO_DT": 4, "WD": 2, "WS": 3,
}
GAPS = {  # group -> (short-gap share, mean run in intervals, long outages per year, outage days)
    "ch4": (0.3, 8, 1.5, (10, 60)), "flux": (0.12, 6, 0.4, (7, 25)), "met": (0.02, 4, 0.2, (5, 20)),
    "rad": (0.02, 4, 0.2, (5, 20)), "soil": (0.01, 4, 0.25, (10, 40)), "water": (0.01, 4, 0.3, (10, 60)),
    "snow": (0.05, 4, 0.3, (5, 30)),
}
GROUP = {"FCH4": "ch4", "NEE": "flux", "H": "flux", "LE": "flux", "USTAR": "flux", "WTD": "water",
         "D_SNOW": "snow", "G": "soil"} | dict.fromkeys(("SW_IN", "SW_OUT", "LW_IN", "LW_OUT", "NETRAD",
                                                        "PPFD_IN"), "rad")


def gap_masks(grid: Grid, rng: np.random.Generator, boreal: bool,
              night_calm: np.ndarray) -> dict[str, np.ndarray]:
    """Per instrument group, True where the interval was measured."""
    masks = {group: ~_gaps(grid, rng, *spec) for group, spec in GAPS.items()}
    masks["ch4"] &= ~night_calm
    if boreal and rng.random() < 0.6:  # analyser shut down over winter
        days = grid.days()
        doy = (days - days.astype("datetime64[Y]")).astype(np.int64) + 1
        off = (doy >= 320 + rng.integers(-15, 16)) | (doy <= 100 + rng.integers(-15, 16))
        masks["ch4"] &= ~np.repeat(off, grid.steps)
    return masks


def _gaps(grid: Grid, rng: np.random.Generator, share: float, mean_run: int, per_year: float,
          outage_days: tuple[int, int]) -> np.ndarray:
    marks = np.zeros(grid.size + 1, np.int64)
    n_runs = rng.poisson(share * grid.size / mean_run)
    starts = rng.integers(0, grid.size, n_runs)
    np.add.at(marks, starts, 1)
    np.add.at(marks, np.minimum(starts + rng.geometric(1 / mean_run, n_runs), grid.size), -1)
    n_long = rng.poisson(per_year * grid.n_days / 365.25)
    starts = rng.integers(0, grid.n_days, n_long) * grid.steps
    lengths = rng.integers(outage_days[0], outage_days[1] + 1, n_long) * grid.steps
    np.add.at(marks, starts, 1)
    np.add.at(marks, np.minimum(starts + lengths, grid.size), -1)
    return np.cumsum(marks[:-1]) > 0


def mds_fill(grid: Grid, values: np.ndarray) -> np.ndarray:
    """Measured values, gaps filled with the same-time-of-day mean within +-7 days (see module doc)."""
    measured = ~np.isnan(values)
    table = np.where(measured, values, 0.0).reshape(grid.n_days, grid.steps)
    counts = measured.reshape(grid.n_days, grid.steps).astype(np.float64)
    window = 2 * MDS_WINDOW_DAYS + 1

    def rolling(a: np.ndarray) -> np.ndarray:
        padded = np.concatenate([np.zeros((MDS_WINDOW_DAYS + 1, grid.steps)), a,
                                 np.zeros((MDS_WINDOW_DAYS, grid.steps))])
        total = np.cumsum(padded, axis=0)
        return total[window:] - total[:-window]

    sums, n = rolling(table), rolling(counts)
    fill = np.divide(sums, n, out=np.full_like(sums, np.nan), where=n > 0).ravel()
    return np.where(measured, values, np.where(_long_gaps(measured, grid), np.nan, fill))


def _long_gaps(measured: np.ndarray, grid: Grid) -> np.ndarray:
    """True inside runs of missing intervals longer than LONG_GAP_DAYS."""
    edges = np.flatnonzero(np.diff(np.concatenate([[1], measured.astype(np.int8), [1]])))
    starts, ends = edges[::2], edges[1::2]
    long = (ends - starts) > LONG_GAP_DAYS * grid.steps
    marks = np.zeros(len(measured) + 1, np.int64)
    np.add.at(marks, starts[long], 1)
    np.add.at(marks, ends[long], -1)
    return np.cumsum(marks[:-1]) > 0


def era_fill(grid: Grid, name: str, measured: np.ndarray | None, truth: np.ndarray,
             rng: np.random.Generator) -> np.ndarray:
    """Measured values where available, else a reanalysis-like estimate of the truth."""
    error = to_grid(grid, daily_ar1(rng, grid.n_days, 0.7, 1.0))
    estimate = {
        "TA": truth + error, "SW_IN": np.clip(truth * (1 + 0.1 * error), 0, None),
        "LW_IN": truth + 10 * error,
        "VPD": np.clip(truth * (1 + 0.1 * error), 0, None), "PA": truth + 0.1 * error,
        "P": truth, "WS": np.clip(truth * (1 + 0.15 * error), 0.1, None),
    }[name]
    return estimate if measured is None else np.where(np.isnan(measured), estimate, measured)


def round_column(name: str, values: np.ndarray) -> np.ndarray:
    """Round as written: per-variable decimals; ANN values and uncertainties to 4 decimals."""
    base = name.split("_F")[0]
    decimals = DECIMALS.get("TS" if base.startswith("TS_") else base, 4)
    if "ANNOPTLM" in name or "UNC" in name:
        decimals = 4
    return np.round(values, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0


def daily_values(grid: Grid, name: str, values: np.ndarray) -> np.ndarray:
    """One column's daily value from its interval values (rules in the module docstring)."""
    table = values.reshape(grid.n_days, grid.steps)
    present = ~np.isnan(table)
    count = present.sum(axis=1)
    total = np.where(present, table, 0.0).sum(axis=1)
    complete = count == grid.steps
    if name.endswith("_QC"):
        return np.where(count > 0, np.where(present, table, -np.inf).max(axis=1), np.nan)
    if name in ("P", "P_F"):
        return np.where(complete, total, np.nan)
    if "_F" in name:
        return np.where(complete, total / grid.steps, np.nan)
    return np.divide(total, count, out=np.full(grid.n_days, np.nan), where=count > 0)
