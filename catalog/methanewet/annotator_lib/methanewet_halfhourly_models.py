"""Models of the half-hourly methanewet-hh-* tasks: the process model, gap filling, forecasts, transfer.

Mounted read-only beside each task's reproduce.py. Imports only what an agent's environment has
(numpy, pandas, scikit-learn) and the libraries `methanewet_annotator` (keys, the flux floor) and
`methanewet_halfhourly` (the rows and their features). Everything is vectorised per site and
deterministic: fixed seeds, one thread, no early stopping.

Fluxes are modelled in log space (they are multiplicative in their drivers) and back-transformed;
a site's flux level is divided out (`process_model` per site, `shared_process_model` with a level
per site) so that one model can be pooled over sites of different magnitude.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from methanewet_annotator import FLOOR, KEY, TARGET
from methanewet_halfhourly import TIME, local_clock, steps_per_day

PROCESS = ("temperature", "pool_1d", "pool_7d", "pool_45d", "hour_sin", "hour_cos", "wtd_below")


def boosted_trees(iterations: int = 80, leaves: int = 15):
    """The gradient-boosted tree ensemble the scripts use, deterministic (imported here: the
    scripts without trees skip scikit-learn's import, seconds on a busy machine)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(max_iter=iterations, learning_rate=0.1, max_leaf_nodes=leaves,
                                         min_samples_leaf=40, l2_regularization=1.0,
                                         early_stopping=False, random_state=0)


def log_flux(flux: np.ndarray) -> np.ndarray:
    """ln(max(flux, FLOOR)): methane fluxes are multiplicative in their drivers."""
    return np.log(np.maximum(np.asarray(flux, dtype=float), FLOOR))


def ridge(x: np.ndarray, y: np.ndarray, alpha: float = 10.0):
    """Ridge regression on standardised columns; returns the prediction function."""
    centre, spread = x.mean(axis=0), x.std(axis=0)
    spread[spread == 0] = 1.0
    z, level = (x - centre) / spread, y.mean()
    coef = np.linalg.solve(z.T @ z + alpha * np.eye(z.shape[1]), z.T @ (y - level))
    return lambda new: level + ((new - centre) / spread) @ coef


def process_model(frame: pd.DataFrame, features: pd.DataFrame, train: np.ndarray,
                  target: np.ndarray, columns: tuple[str, ...] = PROCESS) -> np.ndarray:
    """Per site, the log-linear process model fitted on `train` rows: ln F of every row.

    ln F = c + b1 T + b2..b4 pools + diurnal harmonics + b5 min(WTD, 0) (a Q10 response, the
    lagged substrate supply, plant transport and water-table limitation), by ridge regression;
    the simulation is clipped to the range seen in training (no exponential extrapolation).
    `target` is ln flux; a site without training rows gets the pooled mean.
    """
    out = np.full(len(frame), np.nan)
    for _, rows in frame.groupby(KEY).indices.items():
        usable = [c for c in columns if c in features and features[c].iloc[rows].notna().all()]
        fit = rows[train[rows]]
        if len(fit) < 10 or not usable:
            continue
        x = features[usable].to_numpy(dtype=float)
        out[rows] = np.clip(ridge(x[fit], target[fit])(x[rows]), target[fit].min(), target[fit].max())
    return np.where(np.isnan(out), np.nanmean(target[train]), out)


def edge_anomaly(frame: pd.DataFrame, residual: np.ndarray, known: np.ndarray, per_day: pd.Series,
                 smooth_hours: float = 3.0, tau_days: float = 2.0) -> np.ndarray:
    """Per site, the known residual (smoothed over +-`smooth_hours`) interpolated linearly across
    each gap and shrunk toward 0 with the distance d to the nearer edge: exp(-d / tau_days).

    The drivers miss a day-to-day anomaly that persists for a few days: near a gap's edges it is
    known, deep inside a long gap it fades to the process model. Known rows get 0.
    """
    out = np.zeros(len(frame))
    for _, rows in frame.groupby(KEY).indices.items():
        steps, own = int(per_day.iloc[rows[0]]), known[rows]
        width = max(int(smooth_hours * steps / 24), 1)
        values = pd.Series(np.where(own, residual[rows], np.nan))
        smooth = values.rolling(2 * width + 1, center=True, min_periods=1).mean().where(own)
        line = smooth.interpolate(limit_direction="both").fillna(0.0).to_numpy()
        index = np.arange(len(rows))
        before = np.maximum.accumulate(np.where(own, index, -len(rows)))
        after = np.minimum.accumulate(np.where(own, index, 2 * len(rows))[::-1])[::-1]
        distance = np.minimum(index - before, after - index) / steps
        out[rows] = np.where(own, 0.0, line * np.exp(-distance / tau_days))
    return out


def back_transform(log_sim: np.ndarray, residual: np.ndarray, median: bool = False) -> np.ndarray:
    """Flux from a log-space simulation: exp(sim) times the mean of exp(residual) (the mean
    flux, for squared errors) or times exp(median residual) (the median, for absolute errors)."""
    factor = np.nanmedian(residual) if median else np.log(np.nanmean(np.exp(residual)))
    return np.exp(log_sim + float(factor))


def fill_gaps(frame: pd.DataFrame, features: pd.DataFrame, column: str = TARGET,
              median: bool = False) -> np.ndarray:
    """Every row's fill of `column`: the process model plus the edges' day-to-day anomaly."""
    flux = frame[column].to_numpy(dtype=float)
    known = ~np.isnan(flux)
    target = log_flux(flux)
    simulated = process_model(frame, features, known, target)
    residual = np.where(known, target - simulated, np.nan)
    anomaly = edge_anomaly(frame, residual, known, steps_per_day(frame))
    return back_transform(simulated + anomaly, residual, median)


def check_fill(frame: pd.DataFrame, features: pd.DataFrame, run_days: tuple[float, float],
               column: str = TARGET, median: bool = False) -> pd.DataFrame:
    """Hide seeded pseudo-gaps of observed rows, fill them: (site, observed, filled) per hidden row."""
    known = frame[column].notna().to_numpy()
    hidden = pseudo_gaps(frame, known, 0.15, run_days, steps_per_day(frame), seed=7)
    filled = fill_gaps(frame.assign(**{column: frame[column].where(~hidden)}), features, column, median)
    return pd.DataFrame({KEY: frame.loc[hidden, KEY].to_numpy(),
                         "observed": frame.loc[hidden, column].to_numpy(), "filled": filled[hidden]})


# --- residual structure: the day-to-day anomaly the drivers miss ------------------------------------

def decayed_anomaly(frame: pd.DataFrame, residual: np.ndarray, known: np.ndarray, test: np.ndarray,
                    per_day: pd.Series, tau_days: float = 2.0) -> np.ndarray:
    """Per site, the mean residual of the last known day before the test rows, decaying in them."""
    out = np.zeros(len(frame))
    for _, rows in frame.groupby(KEY).indices.items():
        steps = int(per_day.iloc[rows[0]])
        before = rows[~test[rows]]
        last = before[known[before]][-steps:]
        level = float(np.mean(residual[last])) if len(last) else 0.0
        ahead = np.cumsum(test[rows]) / steps
        out[rows] = np.where(test[rows], level * np.exp(-ahead / tau_days), 0.0)
    return out


def pseudo_gaps(frame: pd.DataFrame, known: np.ndarray, share: float, run_days: tuple[float, float],
                per_day: pd.Series, seed: int) -> np.ndarray:
    """Runs of `run_days` days drawn per site over known rows until about `share` of them."""
    rng = np.random.default_rng(seed)
    hidden = np.zeros(len(frame), dtype=bool)
    for _, rows in frame.groupby(KEY).indices.items():
        steps, own = int(per_day.iloc[rows[0]]), np.zeros(len(rows), dtype=bool)
        target = share * known[rows].sum()
        for _ in range(1000):
            if (own & known[rows]).sum() >= target:
                break
            length = int(rng.uniform(*run_days) * steps)
            first = int(rng.integers(0, max(len(rows) - length, 0) + 1))
            own[first:first + length] = True
        hidden[rows] = own & known[rows]
    return hidden


# --- prediction engines shared by the scripts -------------------------------------------------------

def shared_process_model(frame: pd.DataFrame, features: pd.DataFrame, train: np.ndarray,
                         target: np.ndarray, columns: tuple[str, ...] = PROCESS) -> np.ndarray:
    """One log-linear response pooled over sites with a level per site (a pretrained model whose
    intercept is fine-tuned per site): ln F of every row, clipped to the training range."""
    usable = [c for c in columns if c in features and features[c].notna().all()]
    x = features[usable].to_numpy(dtype=float)
    site_mean_x = pd.DataFrame(x).groupby(frame[KEY].to_numpy()).transform("mean").to_numpy()
    level = pd.Series(np.where(train, target, np.nan)).groupby(frame[KEY].to_numpy()).transform("mean")
    level = level.fillna(np.nanmean(target[train])).to_numpy()
    response = ridge((x - site_mean_x)[train], (target - level)[train])
    within = response(x - site_mean_x) - response(np.zeros((1, x.shape[1])))
    return np.clip(level + within, target[train].min(), target[train].max())


def forecast(frame: pd.DataFrame, features: pd.DataFrame, test: np.ndarray, shared: bool = False,
             column: str = TARGET) -> np.ndarray:
    """Flux of every row from the process model fitted before the test rows, plus the last known
    day's anomaly decaying into the test period (`shared`: the pooled response, per-site level)."""
    flux = frame[column].to_numpy(dtype=float)
    known = ~np.isnan(flux) & ~test
    target = log_flux(flux)
    model = shared_process_model if shared else process_model
    simulated = model(frame, features, known, target)
    residual = np.where(known, target - simulated, np.nan)
    anomaly = decayed_anomaly(frame, residual, known, test, steps_per_day(frame))
    return back_transform(simulated + anomaly, residual)


def validate_forecast(frame: pd.DataFrame, features: pd.DataFrame, test: np.ndarray,
                      shared: bool = False, column: str = TARGET) -> pd.DataFrame:
    """The same forecast one test-period length earlier (at most half the public record), scored
    on known rows: (site, time, observed, filled)."""
    times = frame[TIME]
    first = times[test].min()
    length = min(times.max() - first, (first - times.min()) / 2)  # keep half the record to fit on
    early = (times >= first - length).to_numpy() & ~test
    part = frame[~test].reset_index(drop=True)
    sim = forecast(part, features[~test].reset_index(drop=True), early[~test], shared, column)
    keep = early[~test] & part[column].notna().to_numpy()
    return pd.DataFrame({KEY: part.loc[keep, KEY].to_numpy(), TIME: part.loc[keep, TIME].to_numpy(),
                         "observed": part.loc[keep, column].to_numpy(), "filled": sim[keep]})


def pooled_trees(frame: pd.DataFrame, features: pd.DataFrame, train: np.ndarray,
                 column: str = TARGET, iterations: int = 80, rows_max: int = 30_000) -> np.ndarray:
    """Boosted trees of ln flux pooled over the training sites (every 2nd..nth row if many):
    the flux of every row, back-transformed with the training residuals."""
    target = log_flux(frame[column].to_numpy(dtype=float))
    fit = np.flatnonzero(train)
    fit = fit[:: max(1, len(fit) // rows_max)]
    usable = [c for c in features if features[c].iloc[fit].notna().any()]
    model = boosted_trees(iterations).fit(features[usable].iloc[fit], target[fit])
    simulated = model.predict(features[usable])
    return back_transform(simulated, target[fit] - simulated[fit])


def scale_to_daily(frame: pd.DataFrame, values: np.ndarray, daily: pd.DataFrame, sites: pd.DataFrame,
                   column: str = TARGET) -> np.ndarray:
    """`values` scaled per site and local standard day (the daily record's date) so that the day's
    mean equals the daily `column`; days without a daily value keep `values`."""
    day = local_clock(frame, sites)["day"]
    keys = pd.DataFrame({KEY: frame[KEY].to_numpy(), "date": day.to_numpy(), "shape": values})
    keys["day_shape"] = keys.groupby([KEY, "date"])["shape"].transform("mean")
    means = daily[[KEY, "date", column]].rename(columns={column: "daily"})
    joined = keys.merge(means, on=[KEY, "date"], how="left")
    return np.where(joined["daily"].notna(), values * joined["daily"] / joined["day_shape"], values)


def downscale_daily(frame: pd.DataFrame, features: pd.DataFrame, daily: pd.DataFrame,
                    sites: pd.DataFrame, test: np.ndarray, column: str = TARGET) -> np.ndarray:
    """Half-hourly flux of every row: the forecast's within-day shape scaled to the daily means."""
    return scale_to_daily(frame, forecast(frame, features, test, column=column), daily, sites, column)


def transfer_site_models(frame: pd.DataFrame, features: pd.DataFrame, held: list[str],
                         weights: pd.DataFrame, column: str = TARGET,
                         columns: tuple[str, ...] = PROCESS) -> np.ndarray:
    """Flux of every row of the held-out sites: each public site's log-linear process model
    applied to the held-out site's drivers, back-transformed and averaged with `weights`
    (held x public).
    Columns a held-out site lacks (e.g. no water table) are left out of every model."""
    flux = frame[column].to_numpy(dtype=float)
    target, out = log_flux(flux), np.full(len(frame), np.nan)
    groups = frame.groupby(KEY).indices
    for site in held:
        rows = groups.get(site)
        if rows is None:
            continue
        usable = [c for c in columns if c in features and features[c].iloc[rows].notna().all()]
        x_new, total, mix = features[usable].to_numpy(dtype=float)[rows], 0.0, []
        for donor, weight in weights.loc[site].items():
            fit = groups[donor][~np.isnan(flux[groups[donor]])]
            if weight <= 0 or len(fit) < 10 or features[usable].iloc[fit].isna().any().any():
                continue
            x_fit = features[usable].to_numpy(dtype=float)[fit]
            predict = ridge(x_fit, target[fit])
            mix.append(weight * back_transform(predict(x_new), target[fit] - predict(x_fit)))
            total += weight
        out[rows] = np.sum(mix, axis=0) / total if total > 0 else np.nanmean(flux)
    return out
