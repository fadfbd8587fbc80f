"""Climate indices and hydrological signatures of the CAMELS attribute files.

Definitions follow Addor et al. (2017), doi:10.5194/hess-21-5293-2017, and the code that produced
the files (github.com/naddor/camels, `clim/clim_indices.R` and `hydro/hydro_signatures.R`),
computed over the whole record for every basin at once. Arrays are (days, basins); results
are (basins,). Missing discharge is NaN and is left out, as the CAMELS code does.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

OMEGA = 2 * np.pi / 365.25
SEASON_OF_MONTH = np.array([0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0])  # djf, mam, jja, son
SEASONS = np.array(["djf", "mam", "jja", "son"], dtype=object)


def climate_indices(doy: np.ndarray, month: np.ndarray, prcp: np.ndarray, tmean: np.ndarray,
                    pet: np.ndarray) -> dict[str, np.ndarray]:
    """The 11 columns of `camels_clim.txt`, keyed by their CAMELS names."""
    p_mean, pet_mean = prcp.mean(axis=0), pet.mean(axis=0)
    t = doy - 1.0
    design = np.column_stack([np.ones_like(t), np.sin(OMEGA * t), np.cos(OMEGA * t)])
    t_coef = _fit_columns(design, tmean)
    p_coef = _fit_columns(design[:, 1:], prcp / p_mean - 1)
    # P = mean (1 + dp sin(w (t - s_p))), T = mean + dT sin(w (t - s_t)): Berghuijs et al. 2014
    delta_p = np.hypot(p_coef[0], p_coef[1])
    phase_gap = np.arctan2(p_coef[1], p_coef[0]) - np.arctan2(t_coef[2], t_coef[1])
    high, low = prcp >= 5 * p_mean, prcp < 1
    season = SEASON_OF_MONTH[month - 1]
    per_year = 365.25 / prcp.shape[0]
    return {
        "p_mean": p_mean, "pet_mean": pet_mean, "p_seasonality": delta_p * np.cos(phase_gap),
        "frac_snow": (prcp * (tmean <= 0)).sum(axis=0) / prcp.sum(axis=0),
        "aridity": pet_mean / p_mean,
        "high_prec_freq": high.sum(axis=0) * per_year, "high_prec_dur": mean_run_length(high),
        "high_prec_timing": busiest_season(high, season),
        "low_prec_freq": low.sum(axis=0) * per_year, "low_prec_dur": mean_run_length(low),
        "low_prec_timing": busiest_season(low, season),
    }


def hydrological_signatures(year: np.ndarray, month: np.ndarray, q: np.ndarray,
                            prcp: np.ndarray) -> dict[str, np.ndarray]:
    """The 13 columns of `camels_hydro.txt` from discharge and precipitation in mm/d."""
    ok = np.isfinite(q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-missing basins give NaN
        q_mean = np.nanmean(q, axis=0)
        q5, q33, q66, q95 = np.nanquantile(q, [0.05, 0.33, 0.66, 0.95], axis=0)
        median = np.nanmedian(q, axis=0)
    days = ok.sum(axis=0)
    high, low = (q > 9 * median) & ok, (q <= 0.2 * q_mean) & ok
    with np.errstate(divide="ignore", invalid="ignore"):
        slope_fdc = np.where(q33 > 0, (np.log(q66) - np.log(q33)) / 0.33, np.nan)
        runoff_ratio = q_mean / (np.where(ok, prcp, 0).sum(axis=0) / days)
    hfd, elasticity = _water_year_signatures(year, month, q, prcp)
    return {
        "q_mean": q_mean, "runoff_ratio": runoff_ratio, "slope_fdc": slope_fdc,
        "baseflow_index": baseflow_index(q), "stream_elas": elasticity, "q5": q5, "q95": q95,
        "high_q_freq": high.sum(axis=0) / days * 365.25, "high_q_dur": mean_run_length(high),
        "low_q_freq": low.sum(axis=0) / days * 365.25, "low_q_dur": mean_run_length(low),
        "zero_q_freq": ((q <= 0) & ok).sum(axis=0) / days, "hfd_mean": hfd,
    }


def _fit_columns(design: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of each column of `values`, shape (coefficients, basins).

    One basin at a time, so the number of basins solved together (the generator's chunk) cannot
    change the last bits of a basin's result.
    """
    solve = np.linalg.pinv(design)
    return np.stack([solve @ values[:, column] for column in range(values.shape[1])], axis=1)


def mean_run_length(events: np.ndarray) -> np.ndarray:
    """Mean length of runs of consecutive True days per basin (0 when there is none)."""
    starts = events & ~np.vstack([np.zeros((1, events.shape[1]), bool), events[:-1]])
    runs = starts.sum(axis=0)
    return np.where(runs > 0, events.sum(axis=0) / np.maximum(runs, 1), 0.0)


def busiest_season(events: np.ndarray, season: np.ndarray) -> np.ndarray:
    """Season with the most event days per basin; None (written NA) on ties or no events."""
    counts = np.stack([events[season == s].sum(axis=0) for s in range(4)])
    best = counts.argmax(axis=0)
    tied = (counts == counts.max(axis=0)).sum(axis=0) > 1
    return np.where(tied, None, SEASONS[best])


def baseflow_index(q: np.ndarray, alpha: float = 0.925) -> np.ndarray:
    """Lyne-Hollick filter, three passes (Ladson et al. 2013); gaps linearly interpolated."""
    filled = pd.DataFrame(q).interpolate(limit_direction="both").to_numpy()
    base = filled
    for direction in (1, -1, 1):
        base = _lyne_hollick_pass(base[::direction], alpha)[::direction]
    with np.errstate(invalid="ignore", divide="ignore"):
        return base.sum(axis=0) / filled.sum(axis=0)


def _lyne_hollick_pass(flow: np.ndarray, alpha: float) -> np.ndarray:
    quick = np.zeros(flow.shape[1])
    base = np.empty_like(flow)
    base[0] = flow[0]
    for day in range(1, flow.shape[0]):
        quick = alpha * quick + (1 + alpha) / 2 * (flow[day] - flow[day - 1])
        quick = np.clip(quick, 0.0, flow[day])
        base[day] = flow[day] - quick
    return base


def _water_year_signatures(year: np.ndarray, month: np.ndarray, q: np.ndarray,
                           prcp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean half-flow date (days since 1 October) and streamflow elasticity.

    Elasticity after Sankarasubramanian et al. (2001); both use complete water years with at
    least 95 % of discharge days present.
    """
    water_year = year + (month >= 10)
    half_dates, q_means, p_means = [], [], []
    for wy in np.unique(water_year):
        days = water_year == wy
        if days.sum() < 365:
            continue
        flow, ok = q[days], np.isfinite(q[days])
        enough = ok.mean(axis=0) >= 0.95
        cumulative = np.nancumsum(flow, axis=0)
        reached = cumulative > 0.5 * cumulative[-1]
        half_dates.append(np.where(enough & (cumulative[-1] > 0), reached.argmax(axis=0) + 1.0,
                                   np.nan))
        q_means.append(np.where(enough, np.nanmean(np.where(ok, flow, np.nan), axis=0), np.nan))
        p_means.append(prcp[days].mean(axis=0))
    n_basins = q.shape[1]
    if len(half_dates) < 2:
        hfd = np.nanmean(half_dates, axis=0) if half_dates else np.full(n_basins, np.nan)
        return hfd, np.full(n_basins, np.nan)
    hfd_years, q_years, p_years = (np.array(x) for x in (half_dates, q_means, p_means))
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        q_all, p_all = np.nanmean(q_years, axis=0), p_years.mean(axis=0)
        ratio = ((q_years - q_all) / q_all) / ((p_years - p_all) / p_all)
        ratio[~np.isfinite(ratio)] = np.nan
        enough = np.isfinite(q_years).sum(axis=0) >= 2
        return np.nanmean(hfd_years, axis=0), np.where(enough, np.nanmedian(ratio, axis=0), np.nan)
