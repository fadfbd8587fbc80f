"""Annotator reproduction: the maize canopy (FPAR) of counties without observations.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; keep the scope's counties and dates.
2. Per county-day drivers (`cropbench_annotator.daily_canopy_features`): day of year, days since
   the calendar's start of season, degree days, extreme heat and water balance accumulated since
   then, the last 30 days' water balance, the year's spring warmth (warm springs sow early) and
   the whole season's heat and water (they set how high the canopy peaks); plus the county's
   calendar and soil, and the same day's mean FPAR of the observed counties (out-of-county for
   the training rows), which carries the year's shared green-up and peak.
3. Boosted trees pooled over the observed counties learn their composites from those drivers;
   predict every day of the held-out counties.
4. Report an estimate of RMSE and median NSE with every third observed county withheld.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import read_artifact_spec, read_scope, write_answer, write_artifact
from cropbench_annotator import KEY, YEAR, daily_canopy_features, per_entity, read_table, season_features
from cropbench_models import boosted
from metrics import nse, rmse

TARGET = "fpar_pct"
DAILY = ["tmin_c", "tmax_c", "tavg_c", "prec_mm_d", "et0_mm_d", TARGET]
SEASON = ["gdd", "edd", "season_prec", "silking_prec", "season_et0", "silking_edd"]
STATIC = ["sos_doy", "eos_doy", "awc_cm_m", "drainage_class"]


def fit_predict(frame: pd.DataFrame, known: np.ndarray, new: np.ndarray, drivers: list[str]) -> np.ndarray:
    """Boosted trees on the known counties' composites, with the same day's out-of-county mean."""
    values = frame[TARGET].where(known)
    day_sum = values.groupby(frame["date"]).transform("sum")
    day_count = values.notna().groupby(frame["date"]).transform("sum")
    own = values.fillna(0.0)
    others = (day_sum - own) / (day_count - values.notna()).replace(0, np.nan)
    x = np.nan_to_num(frame[drivers].assign(day_mean=others).to_numpy(float), nan=-1.0)
    fit = known & frame[TARGET].notna().to_numpy()
    model = boosted(150).fit(x[fit], frame.loc[fit, TARGET])
    return np.clip(model.predict(x[new]), 0, 100)


def main() -> None:
    """Predict FPAR of the held-out counties; write the artifact and the estimates."""
    scope, artifact = read_scope(), read_artifact_spec()
    series = read_table(Path("data"), "timeseries", scope, [KEY, "date", *DAILY])
    entities = read_table(Path("data"), "entities", scope).set_index(KEY)
    frame = daily_canopy_features(series, entities["sos_doy"]).assign(**{TARGET: series[TARGET]})
    season = season_features(series.drop(columns=[TARGET]), entities["sos_doy"])[SEASON]
    frame = frame.assign(**{YEAR: frame["date"].dt.year}).join(season, on=[KEY, YEAR])
    frame = frame.join(entities[[c for c in STATIC if c in entities]].astype(float), on=KEY)
    drivers = [c for c in frame.columns if c not in (KEY, "date", TARGET, YEAR)]
    held = frame[KEY].isin(artifact["rows"]["entities"]).to_numpy()
    frame["fpar_pred_pct"] = np.nan
    frame.loc[held, "fpar_pred_pct"] = fit_predict(frame, ~held, held, drivers)
    public = sorted(frame.loc[~held, KEY].unique())
    check = frame[KEY].isin(public[::3]).to_numpy()
    scored = frame[check].assign(estimate=fit_predict(frame, ~held & ~check, check, drivers))
    scored = scored.dropna(subset=[TARGET])
    write_artifact(frame[held], artifact)
    write_answer(metrics={"rmse_pct": rmse(scored[TARGET], scored["estimate"]),
                          "median_nse": per_entity(scored, TARGET, "estimate", nse)})


if __name__ == "__main__":
    main()
