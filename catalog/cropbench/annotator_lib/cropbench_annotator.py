"""Shared helpers of the cropbench annotator scripts: read a query, build county-season features.

Mounted read-only beside each task's reproduce.py when the annotator runs in the sandbox. Like the
scripts, it imports only what an agent's environment has (numpy, pandas, scikit-learn).

A county-season is (adm_id, harvest_year). Its weather features are aggregated over windows placed
by the county's crop calendar (`sos_doy`, start of season): the season [sos, sos + 130 days), the
silking window [sos + 50, sos + 90) where heat and dry air hurt maize most, and the spring
(April-May) before planting. Only the features whose daily columns the query stages are built.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from annotator_common import read_artifact_spec, read_scope

KEY, YEAR = "adm_id", "harvest_year"
SEASON_DAYS = 130
SILKING = (50, 90)  # days after the start of season
SPRING_MONTHS = (4, 5)
GDD_BASE_C, GDD_CAP_C, HEAT_C = 10.0, 30.0, 30.0
TMAX_BINS_C = (-np.inf, 20.0, 25.0, 29.0, 32.0, 35.0, np.inf)  # days in each tmax band (season)


def read_table(data_dir: Path, name: str, scope: dict, columns: list[str] | None = None) -> pd.DataFrame:
    """Rows of the scope's counties and period only (dates or harvest years), sorted by key and time."""
    table = pq.read_table(data_dir / f"{name}.parquet", columns=columns,
                          filters=[(KEY, "in", list(scope["entities"]))])
    frame = table.to_pandas(ignore_metadata=True, date_as_object=False)  # plain str keys, datetime64 dates
    start, end = pd.Timestamp(scope["start"]), pd.Timestamp(scope["end"])
    time = "date" if "date" in frame.columns else YEAR if YEAR in frame.columns else None
    if time == "date":
        frame = frame[frame["date"].between(start, end)]
    elif time == YEAR:
        frame = frame[frame[YEAR].between(start.year, end.year)]
    order = [KEY] + ([time] if time else [])
    return frame.sort_values(order, kind="stable").reset_index(drop=True)


def read_query(columns: list[str], target: str) -> tuple[dict, dict, pd.DataFrame, pd.DataFrame]:
    """(scope, artifact block, county-seasons with `target` and features, entities) of the query here.

    `columns` are the daily columns to build features from (empty: none); rows whose target is
    null are the ones the artifact owes.
    """
    data = Path("data")
    scope, artifact = read_scope(), read_artifact_spec()
    entities = read_table(data, "entities", scope).set_index(KEY)
    yields = read_table(data, "yields", scope)
    keep = [KEY, YEAR] + [c for c in (target, "harvest_area_ha", "yield_t_ha", "production_t")
                          if c in yields.columns and c not in (KEY, YEAR)]
    panel = yields[list(dict.fromkeys(keep))].set_index([KEY, YEAR])
    if columns:
        series = read_table(data, "timeseries", scope, [KEY, "date", *columns])
        panel = panel.join(season_features(series, entities["sos_doy"]), how="left")
    return scope, artifact, panel.reset_index(), entities


def season_features(series: pd.DataFrame, sos_doy: pd.Series) -> pd.DataFrame:
    """Weather and canopy features per (adm_id, harvest_year) from the daily columns present."""
    frame = series.assign(**{YEAR: series["date"].dt.year})
    day = frame["date"].dt.day_of_year - frame[KEY].map(sos_doy).fillna(120.0).to_numpy()
    season, silking = day.between(0, SEASON_DAYS - 1), day.between(*SILKING, inclusive="left")
    spring = frame["date"].dt.month.isin(SPRING_MONTHS)
    parts: dict[str, pd.Series] = {}
    has = set(series.columns)
    if {"tmin_c", "tmax_c"} <= has or "tavg_c" in has:
        tavg = frame["tavg_c"] if "tavg_c" in has else (frame["tmin_c"] + frame["tmax_c"]) / 2
        parts["gdd"] = (tavg.clip(upper=GDD_CAP_C) - GDD_BASE_C).clip(lower=0).where(season)
        parts["spring_tavg_c"] = tavg.where(spring)
        parts["silking_tavg_c"] = tavg.where(silking)
    if "tmax_c" in has:
        parts["edd"] = (frame["tmax_c"] - HEAT_C).clip(lower=0).where(season)
        parts["silking_edd"] = (frame["tmax_c"] - HEAT_C).clip(lower=0).where(silking)
        band = np.digitize(frame["tmax_c"].to_numpy(), TMAX_BINS_C[1:-1])
        for i in range(len(TMAX_BINS_C) - 1):
            parts[f"days_tmax_band{i}"] = pd.Series(band == i, index=frame.index).astype(float).where(season)
    for column, name in (("prec_mm_d", "prec"), ("cwb_mm_d", "cwb"), ("et0_mm_d", "et0")):
        if column in has:
            parts[f"season_{name}"] = frame[column].where(season)
            parts[f"silking_{name}"] = frame[column].where(silking)
            parts[f"spring_{name}"] = frame[column].where(spring)
    if "vpd_hpa" in has:
        parts["silking_vpd"] = frame["vpd_hpa"].where(silking)
        parts["season_vpd"] = frame["vpd_hpa"].where(season)
    if "rad_j_m2_d" in has:
        parts["season_rad"] = frame["rad_j_m2_d"].where(season) / 1e6
    for column in ("ndvi", "fpar_pct", "ndvi_interp", "fpar_interp_pct"):
        if column in has:
            parts[f"{column}_silking"] = frame[column].where(silking)
            parts[f"{column}_season"] = frame[column].where(season)
    sums = {n for n in parts if n.startswith(("gdd", "edd", "silking_edd", "days_tmax")) or
            n.endswith(("_prec", "_cwb", "_et0"))}
    table = pd.DataFrame(parts).assign(**{KEY: frame[KEY], YEAR: frame[YEAR]})
    grouped = table.groupby([KEY, YEAR], sort=True)
    means = grouped.mean()
    totals = grouped.sum(min_count=1)
    out = means.copy()
    out[sorted(sums)] = totals[sorted(sums)]
    for column in [c for c in out.columns if c.startswith(("ndvi", "fpar"))]:
        out[column.replace("_silking", "_peak").replace("_season", "_max")] = grouped[column].max()
    return out.astype(float)


def feature_columns(panel: pd.DataFrame, exclude: tuple[str, ...] = ()) -> list[str]:
    """The panel's feature columns (everything but keys, yields and `exclude`), non-empty ones only."""
    skip = {KEY, YEAR, "yield_t_ha", "production_t", "harvest_area_ha", *exclude}
    return [c for c in panel.columns if c not in skip and panel[c].notna().any()]


def owed_rows(panel: pd.DataFrame, target: str) -> np.ndarray:
    """Mask of the county-seasons whose target is null: the rows the artifact owes."""
    return panel[target].isna().to_numpy()


def per_entity(frame: pd.DataFrame, obs: str, sim: str, metric, how: str = "median") -> float:
    """A metric per county (counties with at least 3 rows and varying obs), then median or mean."""
    scores = [metric(g[obs].to_numpy(), g[sim].to_numpy()) for _, g in frame.groupby(KEY)
              if len(g) >= 3 and g[obs].std() > 0]
    return float(np.median(scores) if how == "median" else np.mean(scores)) if scores else float("nan")


def daily_canopy_features(series: pd.DataFrame, sos_doy: pd.Series) -> pd.DataFrame:
    """Per county-day drivers of the green canopy: season clock, heat and water accumulated since sowing.

    Needs `tavg_c` (or tmin/tmax), `tmax_c` and `prec_mm_d`, optionally `et0_mm_d`. The spring warmth
    of the year (April-May mean temperature) is broadcast to every day: it moves the sowing date.
    """
    frame = series[[KEY, "date"]].copy()
    tavg = series["tavg_c"] if "tavg_c" in series else (series["tmin_c"] + series["tmax_c"]) / 2
    year = series["date"].dt.year
    frame["doy"] = series["date"].dt.day_of_year
    frame["since_sos"] = frame["doy"] - series[KEY].map(sos_doy).fillna(120.0).to_numpy()
    grown = frame["since_sos"] >= 0
    group = [series[KEY], year]
    frame["gdd_since_sos"] = ((tavg.clip(upper=GDD_CAP_C) - GDD_BASE_C).clip(lower=0) * grown).groupby(group).cumsum()
    frame["edd_since_sos"] = ((series["tmax_c"] - HEAT_C).clip(lower=0) * grown).groupby(group).cumsum()
    water = series["prec_mm_d"] - (series["et0_mm_d"] if "et0_mm_d" in series else 0.0)
    frame["water_since_sos"] = (water * grown).groupby(group).cumsum()
    frame["water_30d"] = water.groupby(series[KEY]).transform(lambda s: s.rolling(30, min_periods=1).sum())
    spring = tavg.where(series["date"].dt.month.isin(SPRING_MONTHS))
    frame["spring_tavg_c"] = spring.groupby(group).transform("mean")
    return frame


def simulated_water_stress(series: pd.DataFrame, sos_doy: pd.Series, awc_cm_m: pd.Series) -> pd.DataFrame:
    """A minimal crop water-balance model per county-season: unmet crop water demand (mm).

    Root-zone bucket of 0.6 x awc x 10 mm, full at sowing; crop demand kc x ET0 with kc rising
    from 0.3 to 1.15 around 35 days after sowing and falling to 0.6 before maturity (130 days);
    rain refills the bucket, what the bucket cannot supply is stress. Returns the season's and the
    silking window's stress per (adm_id, harvest_year).
    """
    out = []
    for county, rows in series.groupby(KEY, sort=True):
        capacity = 0.6 * 10 * float(awc_cm_m.get(county, 17.0))
        since = rows["date"].dt.day_of_year.to_numpy() - float(sos_doy.get(county, 120.0))
        kc = 0.3 + 0.85 / (1 + np.exp(-(since - 35) / 8)) - 0.55 / (1 + np.exp(-(since - SEASON_DAYS + 20) / 8))
        demand, rain = kc * rows["et0_mm_d"].to_numpy(), rows["prec_mm_d"].to_numpy()
        store, stress = capacity, np.zeros(len(rows))
        for i in range(len(rows)):
            if since[i] == 0:
                store = capacity
            store = min(store + rain[i], capacity)
            supplied = min(store, demand[i])
            store -= supplied
            stress[i] = demand[i] - supplied
        frame = pd.DataFrame({KEY: county, YEAR: rows["date"].dt.year.to_numpy(), "stress": stress,
                              "season": (since >= 0) & (since < SEASON_DAYS),
                              "silking": (since >= SILKING[0]) & (since < SILKING[1])})
        out.append(frame.assign(sim_stress_season=frame["stress"] * frame["season"],
                                sim_stress_silking=frame["stress"] * frame["silking"]))
    table = pd.concat(out)
    return table.groupby([KEY, YEAR])[["sim_stress_season", "sim_stress_silking"]].sum()
