"""The half-hourly rows of the methanewet-hh-* tasks and their drivers: reading, clocks, features.

Mounted read-only beside each task's reproduce.py. Imports only what an agent's environment has
(numpy, pandas) and the daily library `methanewet_annotator` (keys, the flux floor). The models
fitted on these features are in `methanewet_halfhourly_models`.

The features follow the process knowledge of wetland methane at the half-hourly scale (the
standard eddy-covariance gap-filling predictors): shallow soil temperature (Q10 response) and its
daily and multi-week means (a substrate pool that lags temperature), the water table below and
above the surface, the local time of day (plant-mediated transport peaks in the early afternoon),
the season, and the always-complete gap-filled meteorology (`*_f_*` drivers).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from methanewet_annotator import GROWING_C, KEY

TIME = "timestamp_start"
TEMPERATURES = ("ts_1_c", "ts_2_c", "ta_f_c", "ta_c")  # the flux's temperature, first present
METEOROLOGY = ("ta_f_c", "sw_in_f_w_m2", "vpd_f_hpa", "ustar_m_s", "p_f_mm")
POOL_DAYS = (1.0, 7.0, 45.0)  # ewm time constants of the growing-season index, days


# --- reading a query -------------------------------------------------------------------------------

def read_halfhourly(data_dir: Path, scope: dict, table: str = "halfhourly") -> pd.DataFrame:
    """The scope's sites of a sub-daily table, sorted by site and time (UTC timestamps)."""
    frame = pd.read_parquet(data_dir / f"{table}.parquet")
    frame[KEY] = frame[KEY].astype(str)
    frame[TIME] = pd.to_datetime(frame[TIME], utc=True)
    frame = frame[frame[KEY].isin(scope["entities"])]
    return frame.sort_values([KEY, TIME], kind="stable").reset_index(drop=True)


def owed_rows(frame: pd.DataFrame, artifact: dict) -> np.ndarray:
    """Mask of the rows the artifact must hold, from the artifact block's `rows` rule."""
    rows = artifact["rows"]
    if rows["kind"] == "holdout":
        return (frame[TIME] >= pd.Timestamp(rows["from"]).tz_localize(None).tz_localize("UTC")).to_numpy()
    if rows["kind"] == "held_out_entities":
        return frame[KEY].isin(rows["entities"]).to_numpy()
    return frame[rows["column"]].isna().to_numpy()


def steps_per_day(frame: pd.DataFrame) -> pd.Series:
    """Time steps per day of each row's site (48 half-hourly, 24 hourly)."""
    step = frame.groupby(KEY)[TIME].transform(lambda t: t.diff().median())
    return (pd.Timedelta(days=1) / step.fillna(pd.Timedelta(minutes=30))).astype(int)


def imagery_attributes(data_dir: Path, sites: pd.DataFrame) -> pd.DataFrame:
    """Per site, its imagery statistics: NDVI mean, minimum, maximum and seasonal range over the
    image dates (site means of `image_stats`) and the relief (`image_static`); null without imagery."""
    stats = pd.read_parquet(data_dir / "image_stats.parquet").astype({KEY: str})
    ndvi = stats[stats["variable"] == "ndvi"].groupby(KEY)["mean"]
    static = pd.read_parquet(data_dir / "image_static.parquet").astype({KEY: str})
    relief = static[static["variable"] == "relief"].set_index(KEY)["mean"]
    out = pd.DataFrame({"ndvi_mean": ndvi.mean(), "ndvi_min": ndvi.min(), "ndvi_max": ndvi.max()})
    out["ndvi_range"] = out["ndvi_max"] - out["ndvi_min"]
    return out.reindex(sites.index).assign(relief_m=relief.reindex(sites.index))


# --- features -------------------------------------------------------------------------------------

def local_clock(frame: pd.DataFrame, sites: pd.DataFrame) -> pd.DataFrame:
    """Local standard hour (0-24) and day of year of each row, from the site's UTC offset."""
    offset = frame[KEY].map(sites["utc_offset_h"]).astype(float).to_numpy()
    local = frame[TIME].dt.tz_localize(None) + pd.to_timedelta(offset, unit="h")
    hour = local.dt.hour + local.dt.minute / 60.0
    return pd.DataFrame({"hour": hour.to_numpy(), "doy": local.dt.dayofyear.to_numpy(),
                         "day": local.dt.normalize().to_numpy()}, index=frame.index)


def temperature(frame: pd.DataFrame) -> pd.Series:
    """Per site, the shallowest soil temperature with data (else air), gaps interpolated."""
    out = pd.Series(np.nan, index=frame.index)
    for _, rows in frame.groupby(KEY).groups.items():
        site = frame.loc[rows]
        column = next(c for c in TEMPERATURES if c in site and site[c].notna().mean() > 0.5)
        out.loc[rows] = site[column].interpolate(limit_direction="both").to_numpy()
    return out


def site_ewm(values: pd.Series, frame: pd.DataFrame, days: float, per_day: pd.Series) -> np.ndarray:
    """Per site, the causal exponentially weighted mean with a time constant of `days`."""
    out = np.empty(len(values))
    for _, rows in frame.groupby(KEY).indices.items():
        span = max(2.0 * days * float(per_day.iloc[rows[0]]) - 1.0, 1.0)  # alpha = 1 / (tau + 1)
        out[rows] = values.iloc[rows].ewm(span=span, adjust=True).mean().to_numpy()
    return out


def driver_features(frame: pd.DataFrame, sites: pd.DataFrame,
                    drivers: tuple[str, ...] = METEOROLOGY) -> pd.DataFrame:
    """Half-hourly driver features (the target never enters); nulls left for the trees."""
    clock, per_day = local_clock(frame, sites), steps_per_day(frame)
    temp = temperature(frame)
    growing = (temp / GROWING_C).clip(0.0, 1.0)
    out = {"hour_sin": np.sin(2 * np.pi * clock["hour"] / 24), "hour_cos": np.cos(2 * np.pi * clock["hour"] / 24),
           "season_sin": np.sin(2 * np.pi * clock["doy"] / 365.25),
           "season_cos": np.cos(2 * np.pi * clock["doy"] / 365.25), "temperature": temp.to_numpy()}
    for days in POOL_DAYS:
        out[f"pool_{days:g}d"] = site_ewm(growing, frame, days, per_day)
    out["temperature_1d"] = site_ewm(temp, frame, 1.0, per_day)
    if "wtd_m" in frame:
        wtd = frame.groupby(KEY)["wtd_m"].transform(lambda s: s.interpolate(limit_direction="both"))
        out["wtd_below"], out["wtd_above"] = np.minimum(wtd, 0.0), np.maximum(wtd, 0.0)
    for column in drivers:
        if column in frame:
            out[column] = frame[column].to_numpy(dtype=float)
    return pd.DataFrame(out, index=frame.index)


def site_attributes(frame: pd.DataFrame, sites: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Static site columns broadcast to the rows; text columns become integer codes."""
    out = {}
    for column in columns:
        values = frame[KEY].map(sites[column])
        if not pd.api.types.is_numeric_dtype(sites[column]):
            codes = {value: i for i, value in enumerate(sorted(sites[column].dropna().astype(str).unique()))}
            values = values.astype(str).map(codes)
        out[column] = values.astype(float).to_numpy()
    return pd.DataFrame(out, index=frame.index)


def site_climate(frame: pd.DataFrame, features: pd.DataFrame) -> pd.DataFrame:
    """Per site, its environment from drivers only (z-scored across sites): mean and range of
    soil temperature, mean water table below the surface, mean incoming shortwave radiation."""
    table = pd.DataFrame({KEY: frame[KEY].to_numpy(), "temperature": features["temperature"].to_numpy(),
                          "wtd": features["wtd_below"].to_numpy() if "wtd_below" in features else 0.0,
                          "sw": frame["sw_in_f_w_m2"].to_numpy() if "sw_in_f_w_m2" in frame else 0.0})
    grouped = table.groupby(KEY)
    climate = pd.DataFrame({"t_mean": grouped["temperature"].mean(),
                            "t_range": grouped["temperature"].quantile(0.9) - grouped["temperature"].quantile(0.1),
                            "wtd_mean": grouped["wtd"].mean().fillna(grouped["wtd"].mean().mean()),
                            "sw_mean": grouped["sw"].mean()}).fillna(0.0)
    spread = climate.std(ddof=0)
    return (climate - climate.mean()) / spread.where(spread > 0, 1.0)
