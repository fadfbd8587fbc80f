"""Annotator reproduction: linear regression vs random forest for daily streamflow, per basin.

Method (the gold):
1. Read the scope block of `prompt.md` and keep only its basins and dates.
2. Build one forcing-only feature set per basin-day, shared by both models (observed streamflow is
   never an input): the day's forcing, a degree-day snow routine (melt, rain + melt = liquid water
   input), potential evapotranspiration (PET, radiation form of Hargreaves' equation),
   exponentially weighted antecedent liquid input over 3 to 180 days, antecedent climatic water
   balance (liquid input - PET) over 30 to 365 days, and the season (sine/cosine of day of year).
3. The test period's streamflow is withheld. Fit ordinary least squares and a random forest per
   basin on the days before it with observed streamflow; predict every test day of each basin with
   both models and write the predictions as the artifact.
4. Report an estimate of each model's median NSE: both models fitted on the first 80 % of the
   training days and scored on the last 20 %.

Deterministic: fixed `random_state`, `n_jobs=1`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import read_artifact_spec, read_scope, write_answer, write_artifact
from camels_annotator import read_timeseries, split_basin_training
from metrics import nse
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression

FORCING = ["prcp_mm_d", "tmax_c", "tmin_c", "srad_w_m2", "vp_pa", "dayl_s"]
VALIDATION_SHARE = 0.2
SPANS = (3, 7, 30, 90, 180)
BALANCE_SPANS = (30, 90, 180, 365)
DDF_MM_C = 2.5  # degree-day melt factor, mm per degC per day


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


def fit_both(features: np.ndarray, target: np.ndarray):
    """The linear model and the random forest, fitted deterministically."""
    linear = LinearRegression().fit(features, target)
    forest = RandomForestRegressor(n_estimators=30, max_features=0.5, min_samples_leaf=5,
                                   random_state=0, n_jobs=1).fit(features, target)
    return linear, forest


def compare_basin(basin: pd.DataFrame, first_test_day: pd.Timestamp):
    """(linear test predictions, forest test predictions, validation NSE linear, forest)."""
    features = basin_features(basin).to_numpy()
    obs = basin["qobs_mm_d"].to_numpy(dtype=float)
    test = (basin["date"] >= first_test_day).to_numpy()
    train = ~test & ~np.isnan(obs)
    early, late = split_basin_training(train, VALIDATION_SHARE)
    checks = [np.clip(m.predict(features[late]), 0.0, None) for m in fit_both(features[early], obs[early])]
    linear, forest = fit_both(features[train], obs[train])
    # NSE is undefined on constant flow: such a basin is left out of the medians.
    scores = [np.nan, np.nan] if np.ptp(obs[late]) == 0 else [nse(obs[late], c) for c in checks]
    return (np.clip(linear.predict(features[test]), 0.0, None),
            np.clip(forest.predict(features[test]), 0.0, None), *scores)


def main() -> None:
    """Predict the test period of the query in the current directory with both models."""
    scope, artifact = read_scope(), read_artifact_spec()
    frame = read_timeseries(Path("data"), scope, [*FORCING, "qobs_mm_d"])
    first_test_day = pd.Timestamp(artifact["rows"]["from"])
    parts, checks = [], []
    for gauge, basin in frame.groupby(scope["entity_key"], sort=True):
        basin = basin.reset_index(drop=True)
        linear, forest, nse_linear, nse_forest = compare_basin(basin, first_test_day)
        days = basin.loc[basin["date"] >= first_test_day, "date"].to_numpy()
        parts.append(pd.DataFrame({"gauge_id": gauge, "date": days, "qsim_linear_mm_d": linear,
                                   "qsim_forest_mm_d": forest}))
        checks.append((nse_linear, nse_forest))
    write_artifact(pd.concat(parts), artifact, select=False)
    checks = np.array(checks)
    write_answer(metrics={"median_nse_linear": round(float(np.nanmedian(checks[:, 0])), 6),
                          "median_nse_forest": round(float(np.nanmedian(checks[:, 1])), 6)})


if __name__ == "__main__":
    main()
