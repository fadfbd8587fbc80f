"""The reference models of a time series, fitted per entity: seasonal means, regressions, gap fillers.

`climatology`, `pooled_climatology`, `linear_forcing`, `interpolate`, `persistence`, `linear_trend`
and `mds` (the package's docstring says what each predicts).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .inputs import INSTANTS, YEARS, _entities, _fill, _public, _times, _where

NOT_FORCING = ("swe_mm",)
MDS_WINDOWS_DAYS = (7, 14, 28)
WINDOW_DAYS = 31
UNIX_DAY_ORDINAL = 719_163  # date(1970, 1, 1).toordinal()


def _seasonal(public: pd.DataFrame, time: str, target: str, required: pd.DataFrame, key: str | None) -> np.ndarray:
    """Smoothed day-of-year mean at each required row, per entity (of every row without `key`); NaN: no history."""
    if public.empty:
        return np.full(len(required), np.nan)
    codes, wanted, _, means = _entities(public, target, required, key)
    values = pd.Series(public[target].to_numpy(dtype=float))
    if time in YEARS:  # the mean of the entity in each year, else over every year
        by_year = values.groupby([codes, public[time].astype(int).to_numpy()]).mean()
        found = by_year.reindex(pd.MultiIndex.from_arrays([wanted, required[time].astype(int).to_numpy()])).to_numpy()
    else:
        by_day = values.groupby([codes, _times(public, time).dt.dayofyear.to_numpy()]).mean().unstack()
        days = by_day.reindex(columns=range(1, 367)).to_numpy().T  # day of year x entity
        padded = pd.DataFrame(np.concatenate([days[-WINDOW_DAYS:], days, days[:WINDOW_DAYS]]))
        smooth = padded.rolling(WINDOW_DAYS, center=True, min_periods=1).mean().to_numpy()[WINDOW_DAYS:-WINDOW_DAYS]
        found = smooth[_times(required, time).dt.dayofyear.to_numpy() - 1, wanted]
    return np.where(wanted < 0, np.nan, np.where(np.isnan(found), means[wanted], found))


def pooled_climatology(tables: dict, scope: dict, artifact: dict, required: pd.DataFrame) -> pd.DataFrame:
    """Smoothed day-of-year mean of the target over every public entity together."""
    public, time, target = _public(tables, artifact)
    return _fill(required, np.nan_to_num(_seasonal(public, time, target, required, None)), artifact)


def climatology(tables: dict, scope: dict, artifact: dict, required: pd.DataFrame) -> pd.DataFrame:
    """Smoothed day-of-year mean of the target per entity (pooled for an entity without history)."""
    public, time, target = _public(tables, artifact)
    pooled, own = (_seasonal(public, time, target, required, key) for key in (None, scope["entity_key"]))
    return _fill(required, np.where(np.isnan(own), np.nan_to_num(pooled), own), artifact)


def _least_squares(fit: np.ndarray, target: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Least squares of `target` on the drivers `fit` (drivers x steps) and an intercept, at the steps `wanted`."""
    informative = np.fmin.reduce(fit, axis=1) < np.fmax.reduce(fit, axis=1)  # all-null or constant: no information
    fit, wanted = fit[informative], wanted[informative]
    missing = np.isnan(fit)  # a null is the driver's mean (each driver's row summed contiguously, as pandas sums)
    means = np.ascontiguousarray(np.where(missing, 0.0, fit)).sum(axis=1)[:, None] / (~missing).sum(axis=1)[:, None]
    x, x_new = (np.column_stack([np.ones(a.shape[1]), np.where(np.isnan(a), means, a).T]) for a in (fit, wanted))
    return x_new @ np.linalg.lstsq(x, target, rcond=None)[0]


def linear_forcing(tables: dict, scope: dict, artifact: dict, required: pd.DataFrame) -> pd.DataFrame:
    """Per-entity least squares of the target on the same row's drivers (pooled without history)."""
    key = scope["entity_key"]
    name, time, target = _where(artifact)
    series = tables[name]
    drivers = [c for c in series.columns if c not in (key, time, target, *NOT_FORCING, *INSTANTS, *YEARS)
               and pd.api.types.is_float_dtype(series[c])]
    public = series[series[target].notna()]
    wanted = required.merge(series.drop(columns=[target]), on=[key, time], how="left")[drivers].to_numpy(float).T
    fit, fit_target = np.ascontiguousarray(public[drivers].to_numpy(dtype=float).T), public[target].to_numpy(float)
    values, fitted = np.zeros(len(required)), np.zeros(len(required), dtype=bool)
    owned = public.groupby(key).indices
    for entity, rows in required.groupby(key).indices.items():
        own = owned.get(entity, ())
        if len(own) > len(drivers) + 1:
            values[rows], fitted[rows] = _least_squares(fit[:, own], fit_target[own], wanted[:, rows]), True
    if len(public) and not fitted.all():  # the other rows from every entity's history together
        values = np.where(fitted, values, _least_squares(fit, fit_target, wanted))
    floor = 0.0 if len(public) and public[target].min() >= 0 else -np.inf
    return _fill(required, np.clip(values, floor, None), artifact)


def interpolate(tables: dict, scope: dict, artifact: dict, required: pd.DataFrame) -> pd.DataFrame:
    """Linear interpolation of the target in time, per entity, ends held."""
    key = scope["entity_key"]
    name, time, target = _where(artifact)
    series = tables[name]
    by_entity = series.groupby(key)[target]  # first: a missing target is named as pandas' groupby names it
    values = series[target].to_numpy(dtype=float)
    last, following = by_entity.ffill().to_numpy(dtype=float), by_entity.bfill().to_numpy(dtype=float)
    known, steps = ~np.isnan(values), np.arange(len(values), dtype=float)
    inner = np.interp(steps, steps[known], values[known]) if known.any() else values  # rows are in entity order
    filled = np.where(np.isnan(last), following, np.where(known | np.isnan(following), last, inner))
    merged = required.merge(series[[key, time]].assign(filled=filled), on=[key, time], how="left")
    return _fill(required, merged["filled"].fillna(0.0).to_numpy(), artifact)


def persistence(tables: dict, scope: dict, artifact: dict, required: pd.DataFrame) -> pd.DataFrame:
    """The last public value before each owed step, per entity (the next one at the series start)."""
    key = scope["entity_key"]
    name, time, target = _where(artifact)
    series, by_entity = tables[name], tables[name].groupby(key)[target]
    carried = series[[key, time]].assign(carried=by_entity.ffill().fillna(by_entity.bfill()))
    merged = required.merge(carried, on=[key, time], how="left")
    fallback = series[target].mean() if series[target].notna().any() else 0.0
    return _fill(required, merged["carried"].fillna(fallback).to_numpy(), artifact)


def _ordinal_years(frame: pd.DataFrame, time: str) -> np.ndarray:
    """Each row's day as years since 0001-01-01 (`date.toordinal` / 365.25; the time of day dropped)."""
    days = _times(frame, time).to_numpy().astype("datetime64[D]").astype(np.int64)
    return (days + UNIX_DAY_ORDINAL) / 365.25


def linear_trend(tables: dict, scope: dict, artifact: dict, required: pd.DataFrame) -> pd.DataFrame:
    """Per-entity least squares of the target on time (the entity mean with fewer than 2 values)."""
    public, time, target = _public(tables, artifact)
    values = np.full(len(required), public[target].mean() if len(public) else 0.0)
    _, wanted, owned, means = _entities(public, target, required, scope["entity_key"])
    years, wanted_years = _ordinal_years(public, time), _ordinal_years(required, time)
    y = public[target].to_numpy(dtype=float)
    for code, rows in pd.Series(wanted).groupby(wanted).indices.items():
        own = owned.get(code, ())
        if len(own) >= 2 and np.ptp(years[own]) > 0:
            slope, intercept = np.polyfit(years[own], y[own], 1)
            values[rows] = intercept + slope * wanted_years[rows]
        elif len(own):
            values[rows] = means[code]
    return _fill(required, values, artifact)


def _window_means(days: np.ndarray, slots: np.ndarray, values: np.ndarray, want_days: np.ndarray,
                  want_slots: np.ndarray, radius: int) -> np.ndarray:
    """Mean of `values` in the same slot within `radius` days of each wanted day (NaN if none)."""
    first = min(days.min(), want_days.min()) - radius
    n_days = max(days.max(), want_days.max()) + radius - first + 2
    n_slots = max(slots.max(), want_slots.max()) + 1
    sums, counts = np.zeros((n_days, n_slots)), np.zeros((n_days, n_slots))
    np.add.at(sums, (days - first + 1, slots), values)
    np.add.at(counts, (days - first + 1, slots), 1.0)
    sums, counts = sums.cumsum(axis=0), counts.cumsum(axis=0)
    high, low = want_days - first + radius + 1, want_days - first - radius
    total, count = sums[high, want_slots] - sums[low, want_slots], counts[high, want_slots] - counts[low, want_slots]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1.0), np.nan)


def mds(tables: dict, scope: dict, artifact: dict, required: pd.DataFrame) -> pd.DataFrame:
    """Marginal distribution sampling: same time of day, nearby days, per entity."""
    public, time, target = _public(tables, artifact)
    if public.empty:
        return _fill(required, np.zeros(len(required)), artifact)
    codes, wanted, _, means = _entities(public, target, required, scope["entity_key"])
    stamps = np.concatenate([_times(public, time).to_numpy(), _times(required, time).to_numpy()])
    days = stamps.astype("datetime64[D]")  # the public rows', then the required rows'
    minutes, days = (stamps - days) // np.timedelta64(1, "m"), days.astype(np.int64)
    slots = np.unique(np.concatenate([codes, wanted]) * 1440 + minutes, return_inverse=True)[1]  # entity x time of day
    (have_days, want_days), (have_slots, want_slots) = np.split(days, [len(public)]), np.split(slots, [len(public)])
    y, estimate = public[target].to_numpy(dtype=float), np.full(len(required), np.nan)
    for radius in MDS_WINDOWS_DAYS:
        gap = np.isnan(estimate)
        if not gap.any():
            break
        estimate[gap] = _window_means(have_days, have_slots, y, want_days[gap], want_slots[gap], radius)
    by_slot = pd.Series(y).groupby(have_slots).mean().reindex(want_slots).to_numpy()
    estimate = np.where(np.isnan(estimate), np.where(np.isnan(by_slot), means[wanted], by_slot), estimate)
    return _fill(required, np.where(wanted < 0, public[target].mean(), estimate), artifact)
