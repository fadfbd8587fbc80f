"""Time series methods of the control annotators: deterministic terms + AR(p) errors (Box-Jenkins style).

A series is modelled as y_t = d_t + r_t, d_t a least-squares combination of deterministic terms
(constant, linear trend in years, one annual harmonic) and r_t a zero-mean AR(p) process fitted by
conditional least squares on the residuals. The terms and the order p (0..3) are chosen jointly by
the Bayesian information criterion on the rows where every lag is observed, so a white-noise series
gets the constant alone (its forecast and its gap fill are its mean). Forecasts run the AR recursion
forward from the last residuals; gaps are filled with the Gaussian conditional mean of the residuals
given the observed days around them (the AR(p) autocovariances), which for AR(1) bends the straight
line between the gap's ends back towards the series' deterministic part.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from annotator_common import write_answer, write_artifact
from control_annotator import read_query  # the query helpers import nothing from here
from metrics import rmse

TERM_SETS = (("const",), ("const", "trend"), ("const", "sin", "cos"), ("const", "trend", "sin", "cos"))
MAX_ORDER = 3
DAYS_PER_YEAR = 365.25


@dataclass(frozen=True)
class SeriesModel:
    """A fitted series model: deterministic terms with their coefficients, AR coefficients, innovation variance."""

    terms: tuple[str, ...]
    beta: np.ndarray
    phi: np.ndarray
    sigma2: float
    origin: pd.Timestamp


def design(dates: pd.Series, terms: tuple[str, ...], origin: pd.Timestamp) -> np.ndarray:
    """The deterministic regressors of `terms` on `dates` (trend in years since `origin`)."""
    years = (pd.to_datetime(dates) - origin).dt.days.to_numpy() / DAYS_PER_YEAR
    angle = 2 * np.pi * pd.to_datetime(dates).dt.day_of_year.to_numpy() / DAYS_PER_YEAR
    columns = {"const": np.ones(len(years)), "trend": years, "sin": np.sin(angle), "cos": np.cos(angle)}
    return np.column_stack([columns[t] for t in terms])


def lagged(residual: np.ndarray, order: int, rows: np.ndarray) -> np.ndarray:
    """Columns r_(t-1) .. r_(t-order) at the row indices `rows`."""
    return np.column_stack([residual[rows - k] for k in range(1, order + 1)]) if order else np.empty((len(rows), 0))


def fit_series(dates: pd.Series, values: np.ndarray, max_order: int = MAX_ORDER) -> SeriesModel:
    """The BIC-best deterministic terms and AR order of one daily series (NaN = not observed)."""
    dates = pd.to_datetime(dates).reset_index(drop=True)
    origin = dates.iloc[0]
    observed = np.isfinite(values)
    complete = observed.copy()
    for k in range(1, max_order + 1):
        complete[k:] &= observed[:-k]
    complete[:max_order] = False
    rows = np.flatnonzero(complete)
    best, best_bic = None, np.inf
    for terms in TERM_SETS:
        x = design(dates, terms, origin)
        beta = np.linalg.lstsq(x[observed], values[observed], rcond=None)[0]
        residual = np.where(observed, values - x @ beta, 0.0)
        for order in range(max_order + 1):
            lags = lagged(residual, order, rows)
            phi = np.linalg.lstsq(lags, residual[rows], rcond=None)[0] if order else np.empty(0)
            innovations = residual[rows] - lags @ phi
            sigma2 = float(np.mean(innovations ** 2))
            bic = len(rows) * np.log(sigma2) + (len(terms) + order) * np.log(len(rows))
            if bic < best_bic - 1e-9:
                best, best_bic = SeriesModel(terms, beta, phi, sigma2, origin), bic
    if not stationary(best.phi):
        best = SeriesModel(best.terms, best.beta, np.empty(0), float(np.var(values[observed])), origin)
    return best


def stationary(phi: np.ndarray) -> bool:
    """Whether the AR polynomial 1 - phi_1 z - ... - phi_p z^p has every root outside the unit circle."""
    if len(phi) == 0:
        return True
    roots = np.roots(np.r_[-phi[::-1], 1.0])
    return bool(np.all(np.abs(roots) > 1.0 + 1e-6))


def deterministic(model: SeriesModel, dates: pd.Series) -> np.ndarray:
    """The model's deterministic part on `dates`."""
    return design(pd.to_datetime(dates).reset_index(drop=True), model.terms, model.origin) @ model.beta


def forecast(model: SeriesModel, history: pd.DataFrame, dates: pd.Series, column: str = "y") -> np.ndarray:
    """Forecasts on `dates` (after the history) from the last AR residuals of `history` (date, column)."""
    past = history[["date", column]].dropna().sort_values("date")
    residual = past[column].to_numpy() - deterministic(model, past["date"])
    steps = (pd.to_datetime(dates).reset_index(drop=True) - past["date"].iloc[-1]).dt.days.to_numpy()
    p = len(model.phi)
    path = list(residual[len(residual) - p:]) if p else []
    for _ in range(int(steps.max(initial=0))):
        path.append(float(np.dot(model.phi, path[-1:-p - 1:-1])) if p else 0.0)
    ahead = np.asarray(path[p:])  # ahead[h - 1]: the residual forecast h days after the history
    residual_ahead = ahead[np.clip(steps - 1, 0, None)] if len(ahead) else np.zeros(len(steps))
    return deterministic(model, dates) + np.where(steps >= 1, residual_ahead, 0.0)


def autocovariance(phi: np.ndarray, sigma2: float, max_lag: int) -> np.ndarray:
    """gamma(0..max_lag) of a stationary AR(p) process (Yule-Walker equations, then the recursion)."""
    p = len(phi)
    if p == 0:
        return np.r_[sigma2, np.zeros(max_lag)]
    system = np.eye(p + 1)
    for h in range(p + 1):
        for k in range(1, p + 1):
            system[h, abs(h - k)] -= phi[k - 1]
    gamma = list(np.linalg.solve(system, np.r_[sigma2, np.zeros(p)]))
    for h in range(p + 1, max_lag + 1):
        gamma.append(float(sum(phi[k - 1] * gamma[h - k] for k in range(1, p + 1))))
    return np.asarray(gamma[:max_lag + 1])


def fill_gaps(model: SeriesModel, dates: pd.Series, values: np.ndarray) -> np.ndarray:
    """`values` with every NaN replaced by its conditional mean given the observed days around its gap."""
    base = deterministic(model, dates)
    observed = np.isfinite(values)
    residual = np.where(observed, values - base, np.nan)
    filled = values.copy()
    p = max(len(model.phi), 1)
    missing = np.flatnonzero(~observed)
    if len(missing) == 0:
        return filled
    starts = missing[np.r_[True, np.diff(missing) > 1]]
    ends = missing[np.r_[np.diff(missing) > 1, True]]
    for start, end in zip(starts, ends, strict=True):
        window = np.arange(max(start - p, 0), min(end + p, len(values) - 1) + 1)
        known = window[observed[window]]
        gap = np.arange(start, end + 1)
        if len(model.phi) == 0 or len(known) == 0:
            filled[gap] = base[gap]
            continue
        gamma = autocovariance(model.phi, model.sigma2, int(window[-1] - window[0]))
        weights = np.linalg.solve(gamma[np.abs(known[:, None] - known[None, :])],
                                  gamma[np.abs(known[:, None] - gap[None, :])])
        filled[gap] = base[gap] + weights.T @ residual[known]
    return filled


def harmonic_fit(dates: pd.Series, values: np.ndarray) -> np.ndarray:
    """Coefficients of values on [1, sin, cos] of the day of year (observed values only)."""
    x = design(pd.to_datetime(dates).reset_index(drop=True), ("const", "sin", "cos"), pd.Timestamp("2000-01-01"))
    keep = np.isfinite(values)
    return np.linalg.lstsq(x[keep], values[keep], rcond=None)[0]


def harmonic_predict(coefficients: np.ndarray, dates: pd.Series) -> np.ndarray:
    """[1, sin, cos] of the day of year @ coefficients."""
    x = design(pd.to_datetime(dates).reset_index(drop=True), ("const", "sin", "cos"), pd.Timestamp("2000-01-01"))
    return x @ coefficients


def forecast_own_past(series: pd.DataFrame, key: str, first: pd.Timestamp,
                      column: str) -> tuple[pd.DataFrame, dict[str, float]]:
    """Run shape of the own-past forecast tasks: every series' test days from its public days.

    Per entity, `fit_series` on the days before `first` forecasts the days from `first` on (the
    artifact: key, date, `column`); the estimate is the same forecast of the public record's last
    test-length days from the days before them, pooled over the entities as rmse and mae.
    """
    def predict(history: pd.DataFrame, dates: pd.Series) -> np.ndarray:
        return forecast(fit_series(history["date"], history["y"].to_numpy(dtype=float)), history, dates)

    rows, obs, sim = [], [], []
    for entity, group in series.groupby(key, sort=True):
        public, test = group[group["date"] < first], group[group["date"] >= first]
        rows.append(pd.DataFrame({key: entity, "date": test["date"], column: predict(public, test["date"])}))
        past, check = public.iloc[:-len(test)], public.iloc[-len(test):]
        obs.append(check["y"].to_numpy())
        sim.append(predict(past, check["date"]))
    obs, sim = np.concatenate(obs), np.concatenate(sim)
    return pd.concat(rows, ignore_index=True), {"rmse": rmse(obs, sim), "mae": float(np.mean(np.abs(obs - sim)))}


def run_own_past_forecast(column: str = "y_forecast") -> None:
    """The own-past forecast tasks end to end: read the query, `forecast_own_past` from the artifact
    block's first test day, write the forecasts as the artifact and the estimate as the answer.

    Method: per series, over the public days, deterministic terms (constant; linear trend; annual
    harmonic) plus AR(p) errors, p = 0..3, terms and p chosen jointly by BIC (`fit_series`; a
    white-noise series gets its mean); the test days are forecast as the deterministic part plus
    the AR recursion from the last residuals. The metrics are estimated by the same forecast of
    the public record's last test-length days from the days before them.
    """
    scope, artifact, series, _ = read_query()
    frame, estimate = forecast_own_past(series, scope["entity_key"], pd.Timestamp(artifact["rows"]["from"]), column)
    write_artifact(frame, artifact)
    write_answer(metrics=estimate)
