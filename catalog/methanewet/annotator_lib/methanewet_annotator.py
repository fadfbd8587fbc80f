"""Shared helpers of the methanewet annotator scripts: read a query, build driver features, score.

Mounted read-only beside each task's reproduce.py when the annotator runs in the sandbox. It
imports only what an agent's environment has (numpy, pandas, scikit-learn). The daily helpers
here are also imported by the half-hourly scripts (`methanewet_halfhourly.py`): keep their names.

The features follow the process knowledge of wetland methane: an exponential (Q10 / Arrhenius)
response to shallow soil temperature, an exponential decline as the water table falls below the
surface, and a substrate pool that lags temperature by weeks (late-season fluxes are higher than
early-season ones at one temperature).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from metrics import kge, mae, nse, r2, rmse  # the harness's own (stages/scoring/query/metrics.py)

KEY = "site_id"
TARGET = "fch4_nmol_m2_s"
TEMPERATURES = ("ts_1_c", "ts_2_c", "ta_f_c", "ta_c")  # the flux's temperature, first present
GROWING_C = 15.0  # soil temperature at which the growing-season index saturates
POOL_SPANS = (30, 90)  # days: ewm spans of the growing-season index (substrate pools)
BALANCE_SPAN = 40  # days: ewm span of the water balance (rain minus evaporative loss)
ET_MM_PER_C = 0.16  # mm/d of evaporative loss per degC of air temperature above freezing
FLOOR = 0.5  # nmol m-2 s-1: daily fluxes below it count as this much in log space


# --- reading a query ---------------------------------------------------------------------------

def read_daily(data_dir: Path, scope: dict, table: str = "timeseries") -> pd.DataFrame:
    """The scope's sites and days of a daily table, every column, sorted by site and date."""
    frame = pd.read_parquet(data_dir / f"{table}.parquet")
    frame[KEY] = frame[KEY].astype(str)
    frame["date"] = pd.to_datetime(frame["date"])
    keep = frame[KEY].isin(scope["entities"])
    keep &= frame["date"].between(pd.Timestamp(scope["start"]), pd.Timestamp(scope["end"]))
    return frame[keep].sort_values([KEY, "date"], kind="stable").reset_index(drop=True)


def read_sites(data_dir: Path, scope: dict) -> pd.DataFrame:
    """The scope's rows of the entities table, indexed by site id."""
    sites = pd.read_parquet(data_dir / "entities.parquet")
    sites[KEY] = sites[KEY].astype(str)
    return sites[sites[KEY].isin(scope["entities"])].set_index(KEY).sort_index()


# --- transforms and features -------------------------------------------------------------------

def to_log(flux: np.ndarray) -> np.ndarray:
    """ln(max(flux, FLOOR)): fluxes are multiplicative in their drivers."""
    return np.log(np.maximum(np.asarray(flux, dtype=float), FLOOR))


def ewm(values: np.ndarray, span: float) -> np.ndarray:
    """Exponentially weighted running mean from the first day on."""
    return pd.Series(values).ewm(span=span, adjust=True).mean().to_numpy()


def filled(series: pd.Series) -> np.ndarray:
    """A driver with its gaps interpolated in time (ends held); all-null -> zeros."""
    values = series.astype(float).interpolate(limit_direction="both")
    return values.fillna(0.0).to_numpy()


def temperature_column(frame: pd.DataFrame) -> str:
    """The temperature the flux responds to: the shallowest soil probe with data, else air."""
    for column in TEMPERATURES:
        if column in frame and frame[column].notna().mean() > 0.5:
            return column
    raise ValueError("no temperature column with data")


def site_features(site: pd.DataFrame, drivers: list[str], lags: bool = True) -> pd.DataFrame:
    """Daily features of one site (date order): drivers, substrate pools, lags, season.

    Every driver is interpolated across its gaps; `wtd_m` becomes its part below the surface
    (`wtd_below`, <= 0) and above (`wtd_above`). The growing-season index clip(T / 15, 0, 1) of
    the temperature `T` (see `temperature_column`) is smoothed over `POOL_SPANS` days. With
    `lags`, running means of temperature and rain, and the water balance: rain minus an
    evaporative loss proportional to air temperature, smoothed over `BALANCE_SPAN` days (the
    water table relaxes to it).
    """
    out = {}
    for column in drivers:
        if column in site:
            out[column] = filled(site[column])
    temp = filled(site[temperature_column(site)])
    growing = np.clip(temp / GROWING_C, 0.0, 1.0)
    out["temperature"] = temp
    for span in POOL_SPANS:
        out[f"pool_{span}"] = ewm(growing, span)
    if "wtd_m" in out:
        out["wtd_below"] = np.minimum(out["wtd_m"], 0.0)
        out["wtd_above"] = np.maximum(out["wtd_m"], 0.0)
    if lags:
        out["temperature_7"] = ewm(temp, 7)
        out["temperature_30"] = ewm(temp, 30)
        for column in ("p_f_mm", "p_mm"):
            if column in out:
                out[f"{column}_30"] = ewm(out[column], 30)
                air = out.get("ta_f_c", out.get("ta_c", temp))
                loss = ET_MM_PER_C * np.maximum(air, 0.0)
                out["water_balance"] = ewm(out[column] - loss, BALANCE_SPAN)
    doy = site["date"].dt.dayofyear.to_numpy()
    out["season_sin"] = np.sin(2 * np.pi * doy / 365.25)
    out["season_cos"] = np.cos(2 * np.pi * doy / 365.25)
    return pd.DataFrame(out, index=site.index)


def physics_columns(features: pd.DataFrame, substrate: bool = True) -> list[str]:
    """The log-linear process terms: temperature, water table below the surface, substrate pools."""
    columns = ["temperature"]
    if "wtd_below" in features and np.ptp(features["wtd_below"]) > 0:
        columns.append("wtd_below")
    if substrate:
        columns += [f"pool_{span}" for span in POOL_SPANS]
    return columns


SCORES = {"nse": nse, "kge": kge, "r2": r2, "rmse": rmse, "mae": mae}


def score(frame: pd.DataFrame, obs: str, sim: str, function: str, aggregate: str) -> float:
    """A graded metric's value: pooled over rows, or the median / mean of per-site values."""
    frame = frame[frame[obs].notna() & frame[sim].notna()]
    metric = SCORES[function]
    if aggregate == "pooled":
        return metric(frame[obs].to_numpy(), frame[sim].to_numpy())
    values = [metric(g[obs].to_numpy(), g[sim].to_numpy()) for _, g in frame.groupby(KEY)
              if len(g) >= 2 and g[obs].std() > 0]
    return float(np.median(values) if aggregate == "median" else np.mean(values))


# --- per-site profiles and partitions (clustering tasks) -----------------------------------------

def profile_features(frame: pd.DataFrame, column: str, features: list[str]) -> pd.DataFrame:
    """Per site: the prompt's profile features of `column`, z-scored across the sites."""
    rows = {}
    for site, group in frame.groupby(KEY, sort=True):
        group = group[group[column].notna()]
        x = group[column].to_numpy(float)
        years = (group["date"] - group["date"].iloc[0]).dt.days.to_numpy() / 365.25
        monthly = group.groupby(group["date"].dt.month)[column].mean()
        lag = np.corrcoef(x[:-1], x[1:])[0, 1] if np.ptp(x[:-1]) > 0 and np.ptp(x[1:]) > 0 else 0.0
        every = {"mean": x.mean(), "std": x.std(), "cv": x.std() / abs(x.mean()) if x.mean() else 0.0,
                 "q10": np.quantile(x, 0.1), "q90": np.quantile(x, 0.9), "lag1": lag,
                 "seasonal_amplitude": monthly.max() - monthly.min(),
                 "trend": np.polyfit(years, x, 1)[0] if np.ptp(years) > 0 else 0.0}
        rows[site] = {name: float(every[name]) for name in features}
    raw = pd.DataFrame.from_dict(rows, orient="index")[features]
    spread = raw.std(ddof=0)
    return (raw - raw.mean()) / spread.where(spread > 0, 1.0)


def best_partition(space: pd.DataFrame, max_clusters: int = 6) -> tuple[np.ndarray, float]:
    """k-means partitions for k = 2..max_clusters; the labels and silhouette of the best one."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    best: tuple[np.ndarray, float] = (np.zeros(len(space), int), -1.0)
    for k in range(2, min(max_clusters, len(space) - 1) + 1):
        labels = KMeans(n_clusters=k, n_init=20, random_state=0).fit_predict(space.to_numpy())
        if len(set(labels)) < 2:
            continue
        value = float(silhouette_score(space.to_numpy(), labels))
        if value > best[1]:
            best = (labels, value)
    return best
