"""Model fitting shared by the methanewet annotator scripts: per-site process regressions, pooled
trees on their residuals, gap-edge corrections and site-level upscaling.

A `Setup` says what a task models: the target, whether it is multiplicative (fitted in log
space), the drivers and which process terms enter the per-site regression. Every function is
deterministic (fixed seeds, single thread, no early stopping).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from methanewet_annotator import FLOOR, KEY, physics_columns, site_features, to_log
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

RIDGE = 1e-3  # per-site regression penalty (scaled features): keeps short records stable


@dataclass(frozen=True)
class Setup:
    """What a task models; `process` overrides the per-site regression's columns."""

    target: str
    drivers: list[str]
    log: bool = True
    learner: str = "gbm"  # gbm | rf | none: the pooled model of the process residuals
    substrate: bool = True
    lags: bool = True
    process: list[str] = field(default_factory=list)


def features(frame: pd.DataFrame, setup: Setup) -> pd.DataFrame:
    """Per-site features of every row of `frame` (sorted by site and date)."""
    parts = [site_features(site, setup.drivers, setup.lags) for _, site in frame.groupby(KEY, sort=False)]
    return pd.concat(parts).loc[frame.index].fillna(0.0)


def response(frame: pd.DataFrame, setup: Setup) -> np.ndarray:
    """The modelled response: log flux (multiplicative targets) or the target itself."""
    values = frame[setup.target].to_numpy(float)
    return np.where(np.isnan(values), np.nan, to_log(values)) if setup.log else values


def back(values: np.ndarray, setup: Setup) -> np.ndarray:
    """Response -> target units."""
    return np.exp(values) if setup.log else values


def ridge(x: np.ndarray, y: np.ndarray, penalty: float = RIDGE) -> np.ndarray:
    """Coefficients (intercept first) of ridge regression on standardised columns."""
    mean, sd = x.mean(axis=0), x.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    z = (x - mean) / sd
    a = np.column_stack([np.ones(len(z)), z])
    reg = penalty * len(z) * np.diag([0.0, *np.ones(z.shape[1])])
    coef = np.linalg.solve(a.T @ a + reg, a.T @ y)
    return np.concatenate([[coef[0] - np.sum(coef[1:] * mean / sd)], coef[1:] / sd])


def process_fit(feats: pd.DataFrame, y: np.ndarray, train: np.ndarray, sites: np.ndarray,
                setup: Setup) -> np.ndarray:
    """Per-site regression of the response on the process terms; predictions on every row."""
    out = np.full(len(y), np.nan)
    for site in pd.unique(sites):
        rows = sites == site
        columns = setup.process or physics_columns(feats[rows], setup.substrate)
        x = feats.loc[rows, columns].to_numpy()
        fit = rows & train & ~np.isnan(y)
        if fit.sum() < 2 * len(columns) + 5:
            out[rows] = np.nanmean(y[fit]) if fit.any() else np.nanmean(y[train])
            continue
        coef = ridge(feats.loc[fit, columns].to_numpy(), y[fit])
        out[rows] = coef[0] + x @ coef[1:]
    return out


def learner(kind: str):
    """The pooled residual model."""
    if kind == "rf":
        return RandomForestRegressor(n_estimators=30, min_samples_leaf=10, max_features=0.4,
                                     max_samples=0.4, random_state=0, n_jobs=1)
    return HistGradientBoostingRegressor(max_iter=120, learning_rate=0.08, max_leaf_nodes=15,
                                         min_samples_leaf=30, l2_regularization=1.0,
                                         early_stopping=False, random_state=0)


def shared_fit(feats: pd.DataFrame, y: np.ndarray, train: np.ndarray, sites: np.ndarray,
               setup: Setup) -> np.ndarray:
    """Process regression with slopes shared by every site and a site intercept (transfer)."""
    columns = setup.process or physics_columns(feats, setup.substrate)
    x, fit = feats[columns].to_numpy(), train & ~np.isnan(y)
    group = pd.Series(sites[fit])
    x_within = x[fit] - pd.DataFrame(x[fit]).groupby(group.to_numpy()).transform("mean").to_numpy()
    y_within = y[fit] - pd.Series(y[fit]).groupby(group.to_numpy()).transform("mean").to_numpy()
    slopes = ridge(x_within, y_within, penalty=1e-2)[1:]
    offset = pd.Series(y[fit] - x[fit] @ slopes).groupby(group.to_numpy()).mean()
    level = pd.Series(sites).map(offset).fillna(offset.mean()).to_numpy()
    return level + x @ slopes


BASES = {"site": process_fit, "shared": shared_fit}


def fit_predict(frame: pd.DataFrame, setup: Setup, train: np.ndarray,
                feats: pd.DataFrame | None = None, base_fit: str = "site") -> np.ndarray:
    """Response predictions on every row, fitted on the `train` rows with a known response.

    A process regression (per site, or with shared slopes: `BASES`), then a pooled learner of its
    residuals on every feature, the process prediction and the site's mean response (`learner:
    none` skips the second step).
    """
    feats = features(frame, setup) if feats is None else feats
    y, sites = response(frame, setup), frame[KEY].to_numpy()
    base = BASES[base_fit](feats, y, train, sites, setup)
    if setup.learner == "none":
        return base
    level = pd.Series(np.where(train, y, np.nan)).groupby(sites).transform("mean").to_numpy()
    x = feats.assign(process=base, level=level).to_numpy()
    fit = train & ~np.isnan(y)
    model = learner(setup.learner).fit(x[fit], (y - base)[fit])
    return base + model.predict(x)


def smearing(y: np.ndarray, pred: np.ndarray, fit: np.ndarray, sites: np.ndarray) -> np.ndarray:
    """Per-site mean of exp(residual) on the fitted rows: log-space predictions -> mean flux."""
    resid = pd.Series(np.where(fit, np.exp(y - pred), np.nan))
    factor = resid.groupby(sites).transform("mean").to_numpy()
    return np.where(np.isfinite(factor), np.clip(factor, 0.8, 1.5), 1.0)


def predict(frame: pd.DataFrame, setup: Setup, train: np.ndarray, base_fit: str = "site") -> np.ndarray:
    """Target-unit predictions on every row (log models retransformed by smearing)."""
    feats = features(frame, setup)
    pred = fit_predict(frame, setup, train, feats, base_fit)
    if not setup.log:
        return pred
    y = response(frame, setup)
    fit = train & ~np.isnan(y)
    return np.maximum(np.exp(pred) * smearing(y, pred, fit, frame[KEY].to_numpy()), FLOOR / 10)


def transfer(frame: pd.DataFrame, setup: Setup, train: np.ndarray) -> np.ndarray:
    """`predict` with the process slopes shared across sites (short records borrow strength)."""
    return predict(frame, setup, train, base_fit="shared")


# --- gaps: AR(1) interpolation of the residuals from the gap edges --------------------------------

def residual_lag1(resid: np.ndarray, known: np.ndarray) -> float:
    """Lag-1 autocorrelation of a site's residuals over consecutive known days, in [0, 0.95]."""
    pairs = known[:-1] & known[1:]
    if pairs.sum() < 10:
        return 0.0
    a, b = resid[:-1][pairs], resid[1:][pairs]
    return float(np.clip(np.corrcoef(a, b)[0, 1], 0.0, 0.95)) if a.std() > 0 and b.std() > 0 else 0.0


def edge_correction(resid: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Per day: the AR(1) best estimate of the residual from the nearest known days around it."""
    n, phi = len(resid), residual_lag1(resid, known)
    days = np.arange(n)
    prev = np.maximum.accumulate(np.where(known, days, -1))
    nxt = np.minimum.accumulate(np.where(known, days, n)[::-1])[::-1]
    r_prev = np.where(prev >= 0, resid[np.clip(prev, 0, n - 1)], 0.0)
    r_next = np.where(nxt < n, resid[np.clip(nxt, 0, n - 1)], 0.0)
    a = np.where(prev >= 0, phi ** np.abs(days - prev), 0.0)
    b = np.where(nxt < n, phi ** np.abs(nxt - days), 0.0)
    both = (a > 0) & (b > 0)
    denominator = np.where(both, 1 - (a * b) ** 2, 1.0)
    w_prev = np.where(both, a * (1 - b**2) / np.where(denominator > 0, denominator, 1.0), a)
    w_next = np.where(both, b * (1 - a**2) / np.where(denominator > 0, denominator, 1.0), b)
    return np.where(known, resid, w_prev * r_prev + w_next * r_next)


def fill(frame: pd.DataFrame, setup: Setup, known: np.ndarray) -> np.ndarray:
    """Target-unit values of every row: the model, corrected by its residuals at the gap edges."""
    feats = features(frame, setup)
    pred = fit_predict(frame, setup, known, feats)
    y, sites = response(frame, setup), frame[KEY].to_numpy()
    out = np.empty(len(frame))
    for site in pd.unique(sites):
        rows = np.flatnonzero(sites == site)
        ok = known[rows] & ~np.isnan(y[rows])
        resid = np.where(ok, y[rows] - pred[rows], 0.0)
        out[rows] = pred[rows] + edge_correction(resid, ok)
    if not setup.log:
        return out
    return np.maximum(np.exp(out) * smearing(y, pred, known & ~np.isnan(y), sites), FLOOR / 10)


def pseudo_gaps(frame: pd.DataFrame, column: str, share: float, run_days: tuple[int, int],
                seed: int = 0) -> np.ndarray:
    """Runs of observed days hidden per site (about `share` of them), like the benchmark's gaps."""
    rng = np.random.default_rng(seed)
    hidden = np.zeros(len(frame), dtype=bool)
    observed = frame[column].notna().to_numpy()
    for _, rows in frame.groupby(KEY, sort=True).indices.items():
        mask, target = np.zeros(len(rows), bool), int(share * observed[rows].sum())
        for _ in range(1000):
            if (mask & observed[rows]).sum() >= target:
                break
            length = int(rng.integers(run_days[0], run_days[1] + 1))
            first = int(rng.integers(0, max(len(rows) - length, 0) + 1))
            mask[first:first + length] = True
        hidden[rows] = mask & observed[rows]
    return hidden


# --- sites without measurements: upscaling from site attributes ---------------------------------

def site_attributes(sites: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """Per site: latitude, wetland class codes and record means of the drivers it has."""
    out = pd.DataFrame(index=sites.index)
    out["abs_lat"] = sites["lat_deg"].abs() if "lat_deg" in sites else 0.0
    if "site_classification" in sites:
        for name in ("bog", "fen", "marsh", "swamp", "wet tundra"):
            out[f"class_{name}"] = (sites["site_classification"] == name).astype(float)
    for column in ("ta_f_c", "wtd_m", "p_f_mm", "le_f_w_m2"):
        if column in frame:
            out[f"mean_{column}"] = frame.groupby(KEY)[column].mean().reindex(sites.index)
    return out.astype(float).fillna(out.astype(float).mean()).fillna(0.0)


def upscale(frame: pd.DataFrame, sites: pd.DataFrame, setup: Setup, public: np.ndarray) -> np.ndarray:
    """Target-unit predictions for every row from a model fitted on the `public` sites' rows.

    Pooled trees on the daily drivers and the site attributes, in log space for fluxes, averaged
    with a pooled process regression (common temperature, water-table and substrate terms).
    """
    feats = features(frame, setup)
    attrs = site_attributes(sites, frame).reindex(frame[KEY]).to_numpy()
    x = np.column_stack([feats.to_numpy(), attrs])
    y = response(frame, setup)
    fit = public & ~np.isnan(y)
    columns = setup.process or physics_columns(feats, setup.substrate)
    px = np.column_stack([feats[columns].to_numpy(), attrs])
    coef = ridge(px[fit], y[fit], penalty=1e-2)
    pooled = coef[0] + px @ coef[1:]
    trees = learner(setup.learner if setup.learner != "none" else "gbm").fit(x[fit], y[fit])
    pred = 0.5 * pooled + 0.5 * trees.predict(x)
    if not setup.log:
        return pred
    factor = float(np.clip(np.mean(np.exp(y[fit] - pred[fit])), 0.8, 1.5))
    return np.exp(pred) * factor
