"""Shared helpers of the camels annotator scripts: read a query's scope and data, score hydrographs.

Mounted read-only beside each task's reproduce.py (at /agent) when the annotator runs in the
sandbox. Like the scripts, it imports only what an agent's environment has (numpy, pandas).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import read_artifact_spec, read_scope, write_answer, write_artifact


def read_timeseries(data_dir: Path, scope: dict, columns: list[str]) -> pd.DataFrame:
    """Rows of the scope's basins and dates only, sorted by basin and date."""
    key = scope["entity_key"]
    frame = pd.read_parquet(
        data_dir / "timeseries.parquet",
        columns=[key, "date", *columns],
        filters=[(key, "in", list(scope["entities"]))],
    )
    frame[key] = frame[key].astype(str)
    frame["date"] = pd.to_datetime(frame["date"])
    start, end = pd.Timestamp(scope["start"]), pd.Timestamp(scope["end"])
    frame = frame[frame["date"].between(start, end) & frame[key].isin(scope["entities"])]
    return frame.sort_values([key, "date"], kind="stable").reset_index(drop=True)


def split_basin_training(train: np.ndarray, share: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """(early, late) of one basin's rows: its training rows before / from the position that leaves
    the last `share` of them for validation."""
    rows = np.flatnonzero(train)
    cut = rows[int(len(rows) * (1 - share))]
    position = np.arange(len(train))
    return train & (position < cut), train & (position >= cut)


# --- forcing-only features of a basin (streamflow prediction, gap filling) ---

FORCING = ["prcp_mm_d", "tmax_c", "tmin_c", "srad_w_m2", "vp_pa", "dayl_s"]
SPANS = (1, 3, 7, 15, 30, 60, 120, 180)
DDF_MM_C = 2.5  # degree-day melt factor, mm per degC per day
BUCKETS_MM = (50.0, 150.0, 400.0)  # soil bucket capacities


def ewm(values: np.ndarray, span: float) -> np.ndarray:
    """Exponentially weighted running mean (recursive filter) from the first day on."""
    return pd.Series(values).ewm(span=span, adjust=True).mean().to_numpy()


def snow_routine(prcp: np.ndarray, tmean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Degree-day snow model: returns (snowpack, melt) in mm, snow falls at or below 0 degC."""
    pack, snow, melt = 0.0, [], []
    for rain, temp in zip(prcp.tolist(), tmean.tolist(), strict=True):  # floats: fast loop
        if temp <= 0.0:
            pack += rain
        melted = min(pack, DDF_MM_C * max(temp, 0.0))
        pack -= melted
        snow.append(pack)
        melt.append(melted)
    return np.array(snow), np.array(melt)


def soil_bucket(
    liquid: np.ndarray, pet: np.ndarray, capacity: float
) -> tuple[np.ndarray, np.ndarray]:
    """Soil store: runoff share (S / C)^2 of the input plus overflow; ET = PET * min(S / 0.7C, 1).

    Returns (relative soil moisture S / C, runoff in mm/d).
    """
    store, moisture, runoff = capacity / 2, [], []
    for water, demand in zip(liquid.tolist(), pet.tolist(), strict=True):
        quick = water * (store / capacity) ** 2
        store += water - quick
        overflow = max(store - capacity, 0.0)
        store -= overflow
        store -= min(store, demand * min(store / (0.7 * capacity), 1.0))
        moisture.append(store / capacity)
        runoff.append(quick + overflow)
    return np.array(moisture), np.array(runoff)


def basin_features(basin: pd.DataFrame) -> pd.DataFrame:
    """Forcing-only features of one basin, in date order."""
    prcp = basin["prcp_mm_d"].fillna(0.0).to_numpy()
    tmean = ((basin["tmax_c"] + basin["tmin_c"]) / 2).interpolate(limit_direction="both")
    tmean = tmean.fillna(0.0).to_numpy()
    snow, melt = snow_routine(prcp, tmean)
    liquid = np.where(tmean > 0.0, prcp, 0.0) + melt
    # Hargreaves radiation form: ET0 = 0.0135 (T + 17.8) Rs, Rs in mm/d of evaporated water.
    rs_mm = (basin["srad_w_m2"] * basin["dayl_s"]).fillna(0.0).to_numpy() / 1e6 * 0.408
    pet = np.clip(0.0135 * (tmean + 17.8) * rs_mm, 0.0, None)
    features = {name: basin[name].to_numpy(dtype=float) for name in FORCING}
    features |= {"tmean": tmean, "snowpack": snow, "melt": melt, "liquid": liquid, "pet": pet}
    for span in SPANS:
        features[f"liquid_ewm_{span}"] = ewm(liquid, span)
    for span in (7, 30, 90):
        features[f"pet_ewm_{span}"] = ewm(pet, span)
    for capacity in BUCKETS_MM:
        moisture, runoff = soil_bucket(liquid, pet, capacity)
        features[f"soil_{capacity:.0f}"] = moisture
        features[f"runoff_{capacity:.0f}"] = runoff
        for span in (10, 60):
            features[f"runoff_{capacity:.0f}_ewm_{span}"] = ewm(runoff, span)
    doy = basin["date"].dt.day_of_year.to_numpy()
    features["season_sin"] = np.sin(2 * np.pi * doy / 365.25)
    features["season_cos"] = np.cos(2 * np.pi * doy / 365.25)
    return pd.DataFrame(features, index=basin.index).fillna(0.0)


# --- per-basin profiles and partitions (clustering and exploratory tasks) ---

def basin_profile(dates: pd.Series, values: pd.Series) -> dict[str, float]:
    """The prompt's profile features of one basin's observed values, in date order."""
    seen = values.notna().to_numpy()
    x, t = values[seen].to_numpy(dtype=float), dates[seen].reset_index(drop=True)
    mean, std = float(x.mean()), float(x.std())
    lag1 = 0.0 if np.ptp(x[:-1]) == 0 or np.ptp(x[1:]) == 0 else float(np.corrcoef(x[:-1], x[1:])[0, 1])
    monthly = pd.Series(x).groupby(t.dt.month.to_numpy()).mean()
    years = (t - t.iloc[0]).dt.total_seconds().to_numpy() / (365.25 * 86400)
    return {"mean": mean, "std": std, "cv": std / abs(mean) if mean != 0 else 0.0,
            "q10": float(np.quantile(x, 0.1)), "q90": float(np.quantile(x, 0.9)), "lag1": lag1,
            "seasonal_amplitude": float(monthly.max() - monthly.min()),
            "trend": float(np.polyfit(years, x, 1)[0]) if np.ptp(years) > 0 else 0.0}


def profile_space(frame: pd.DataFrame, key: str, column: str, features: list[str]) -> pd.DataFrame:
    """Standardised (population z-score; zero spread -> 0) profile features, one row per basin."""
    raw = pd.DataFrame({basin: basin_profile(part["date"].reset_index(drop=True),
                                             part[column].reset_index(drop=True))
                        for basin, part in frame.groupby(key, sort=True)}).T[features]
    raw = raw.astype(float)
    spread = raw.std(ddof=0)
    space = (raw - raw.mean()) / spread.where(spread > 0, 1.0)
    space.loc[:, spread == 0] = 0.0
    return space


def best_partition(space: np.ndarray, k_max: int = 6) -> tuple[np.ndarray, float]:
    """k-means (50 restarts, seed 0) for k = 2 .. min(k_max, n - 1); the labels with the highest
    mean silhouette (ties to the smaller k) and that silhouette."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    best = (-2.0, None)
    for k in range(2, min(k_max, len(space) - 1) + 1):
        labels = KMeans(n_clusters=k, n_init=50, random_state=0).fit_predict(space)
        score = silhouette_score(space, labels) if len(set(labels)) > 1 else -1.0
        if score > best[0] + 1e-12:
            best = (float(score), labels)
    return best[1], best[0]


def cluster_profiles(column: str, features: list[str]) -> None:
    """Run shape of the profile-clustering tasks: the scope's basins partitioned on `features` of `column`.

    Reads the query from the working directory, builds `profile_space`, keeps `best_partition`, and
    writes the artifact (key, cluster) and work/answer.json with the partition's silhouette.
    """
    scope, artifact = read_scope(), read_artifact_spec()
    frame = read_timeseries(Path("data"), scope, [column])
    space = profile_space(frame, scope["entity_key"], column, features)
    labels, score = best_partition(space.to_numpy())
    write_artifact(pd.DataFrame({scope["entity_key"]: space.index, "cluster": labels.astype(int)}), artifact)
    write_answer(metrics={"silhouette": score})
