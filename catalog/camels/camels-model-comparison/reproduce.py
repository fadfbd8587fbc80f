"""Annotator reproduction: linear regression vs random forest for daily streamflow, per basin.

Method (the gold):
1. Read the scope block of `prompt.md` and keep only its basins and dates.
2. Build one forcing-only feature set per basin-day, shared by both models (observed streamflow is
   never an input): the day's forcing, a degree-day snow routine (melt, rain + melt = liquid water
   input), potential evapotranspiration (PET, radiation form of Hargreaves' equation),
   exponentially weighted antecedent liquid input over 3 to 180 days, antecedent climatic water
   balance (liquid input - PET) over 30 to 365 days, and the season (sine/cosine of day of year).
3. Split each basin's scope period chronologically: the last 30 % of its calendar days are the test
   period. Fit ordinary least squares and a random forest on the training days with observed
   streamflow; predict the test days.
4. Per basin: Nash-Sutcliffe efficiency (NSE) of each model on the test days with observed
   streamflow. Report the median NSE of each model across basins and the share of basins where the
   forest's NSE is higher than the linear model's.

Deterministic: fixed `random_state`, `n_jobs=1`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from camels_annotator import nse, read_scope, read_timeseries, split_day
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression

FORCING = ["prcp_mm_d", "tmax_c", "tmin_c", "srad_w_m2", "vp_pa", "dayl_s"]
TEST_SHARE = 0.30
SPANS = (3, 7, 30, 90, 180)
BALANCE_SPANS = (30, 90, 180, 365)
DDF_MM_C = 2.5  # degree-day melt factor, mm per degC per day
MIN_TEST_DAYS = 30


def basin_features(basin: pd.DataFrame) -> pd.DataFrame:
    """Forcing-only features of one basin, in date order."""
    prcp = basin["prcp_mm_d"].fillna(0.0).to_numpy()
    tmean = ((basin["tmax_c"] + basin["tmin_c"]) / 2).interpolate(limit_direction="both")
    tmean = tmean.fillna(0.0).to_numpy()
    melt = np.zeros(len(prcp))
    pack = 0.0
    for day in range(len(prcp)):
        if tmean[day] <= 0.0:
            pack += prcp[day]
        melt[day] = min(pack, DDF_MM_C * max(tmean[day], 0.0))
        pack -= melt[day]
    liquid = pd.Series(np.where(tmean > 0.0, prcp, 0.0) + melt)
    # Hargreaves radiation form: ET0 = 0.0135 (T + 17.8) Rs, Rs in mm/d of evaporated water.
    rs_mm = (basin["srad_w_m2"] * basin["dayl_s"]).fillna(0.0).to_numpy() / 1e6 * 0.408
    pet = pd.Series(np.clip(0.0135 * (tmean + 17.8) * rs_mm, 0.0, None))
    features = {name: basin[name].to_numpy(dtype=float) for name in FORCING}
    features |= {"melt": melt, "liquid": liquid.to_numpy(), "pet": pet.to_numpy()}
    for span in SPANS:
        features[f"liquid_ewm_{span}"] = liquid.ewm(span=span).mean().to_numpy()
    features["pet_ewm_30"] = pet.ewm(span=30).mean().to_numpy()
    for span in BALANCE_SPANS:
        features[f"balance_ewm_{span}"] = (liquid - pet).ewm(span=span).mean().to_numpy()
    doy = basin["date"].dt.day_of_year.to_numpy()
    features["season_sin"] = np.sin(2 * np.pi * doy / 365.25)
    features["season_cos"] = np.cos(2 * np.pi * doy / 365.25)
    return pd.DataFrame(features, index=basin.index).fillna(0.0)


def compare_basin(basin: pd.DataFrame, first_test_day: pd.Timestamp) -> tuple[float, float] | None:
    """Return (NSE linear, NSE forest) on the basin's test days, or None if not scorable."""
    features = basin_features(basin).to_numpy()
    obs = basin["qobs_mm_d"].to_numpy(dtype=float)
    observed = ~np.isnan(obs)
    test = (basin["date"] >= first_test_day).to_numpy()
    train_rows, test_rows = observed & ~test, observed & test
    if train_rows.sum() < 365 or test_rows.sum() < MIN_TEST_DAYS or obs[test_rows].std() == 0:
        return None
    linear = LinearRegression().fit(features[train_rows], obs[train_rows])
    forest = RandomForestRegressor(
        n_estimators=30,
        max_features=0.5,
        min_samples_leaf=8,
        max_samples=0.5,
        random_state=0,
        n_jobs=1,
    ).fit(features[train_rows], obs[train_rows])
    return (
        nse(obs[test_rows], linear.predict(features[test_rows])),
        nse(obs[test_rows], forest.predict(features[test_rows])),
    )


def main() -> None:
    """Compute the metrics for the query in the current directory and write work/answer.json."""
    scope = read_scope(Path("prompt.md"))
    frame = read_timeseries(Path("data"), scope, [*FORCING, "qobs_mm_d"])
    first_test_day = split_day(scope, TEST_SHARE)
    pairs = np.array(
        [
            pair
            for _, basin in frame.groupby(scope["entity_key"], sort=True)
            if (pair := compare_basin(basin.reset_index(drop=True), first_test_day)) is not None
        ]
    )
    if len(pairs) == 0:
        raise SystemExit("no basin has enough observed streamflow in both periods")
    metrics = {
        "median_nse_linear": round(float(np.median(pairs[:, 0])), 6),
        "median_nse_forest": round(float(np.median(pairs[:, 1])), 6),
        "share_forest_better": round(float(np.mean(pairs[:, 1] > pairs[:, 0])), 6),
    }
    Path("work").mkdir(exist_ok=True)
    Path("work/answer.json").write_text(json.dumps({"metrics": metrics}, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
