"""Yield models the cropbench annotator scripts share: panel (county x year) regressions.

- `panel_fit_predict`: unseen years of known counties. County fixed effects (a county's mean of
  the target and of every feature), a linear technology trend and a ridge on the county-demeaned
  features; optionally boosted trees or a random forest learn what the ridge leaves (they cannot
  extrapolate a trend, so they never see the year).
- `transfer_fit_predict`: counties never observed. The year's mean target over the public counties
  carries the year; trees learn the county's departure from it from its soil and calendar and its
  weather relative to the year's mean weather (out-of-county cross-fitting keeps the year mean
  honest for the training counties).
- `additive_fill`: missing county-years. Alternating county and year effects on the observed
  values, plus a ridge of the residual on the features' own county-and-year anomalies.
- `knn_fill`: missing county-years from the table alone (weighted k-nearest-neighbour counties).
- `bagged_transfer`: `transfer_fit_predict` averaged over bootstrap samples of the public counties.
- `profile_space`, `best_kmeans`: per-county features of a series and their k-means partition.

Deterministic: fixed `random_state`, single thread, no early stopping.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from cropbench_annotator import KEY, YEAR
from sklearn.cluster import KMeans
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.metrics import silhouette_score

STATIC = ["awc_cm_m", "bulk_density_kg_dm3", "drainage_class", "sos_doy", "eos_doy"]


def boosted(max_iter: int = 150) -> HistGradientBoostingRegressor:
    """Small boosted-tree ensemble for a few thousand county-seasons."""
    return HistGradientBoostingRegressor(max_iter=max_iter, learning_rate=0.05, max_leaf_nodes=8,
                                         min_samples_leaf=15, l2_regularization=1.0,
                                         early_stopping=False, random_state=0)


def forest() -> RandomForestRegressor:
    """Random forest with shallow-ish leaves, single thread."""
    return RandomForestRegressor(n_estimators=200, min_samples_leaf=5, max_features=0.5,
                                 random_state=0, n_jobs=1)


LEARNERS = {"boost": boosted, "forest": forest}


def _standardise(train: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean, sd = np.nanmean(train, axis=0), np.nanstd(train, axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    fill = lambda x: np.nan_to_num((x - mean) / sd)  # noqa: E731 - a missing feature sits at the mean
    return fill(train), fill(other)


def panel_fit_predict(panel: pd.DataFrame, train: np.ndarray, test: np.ndarray, target: str,
                      features: list[str], learner: str | None = "boost", alpha: float = 3.0,
                      trend: bool = True, linear: bool = True) -> np.ndarray:
    """Predict `target` on the `test` rows from the `train` rows (county effects + trend + features).

    `linear=False` keeps the features out of the ridge (it fits the trend only): the learner alone
    models the weather.
    """
    fit_rows = panel[train]
    county_y = fit_rows.groupby(KEY)[target].mean()
    county_x = fit_rows.groupby(KEY)[features].mean()
    county_t = fit_rows.groupby(KEY)[YEAR].mean()

    def design(rows: pd.DataFrame) -> np.ndarray:
        x = rows[features].to_numpy(float) - county_x.reindex(rows[KEY]).to_numpy(float)
        t = (rows[YEAR].to_numpy(float) - county_t.reindex(rows[KEY]).to_numpy(float))[:, None]
        return np.hstack([x, t]) if trend else x

    def offset(rows: pd.DataFrame) -> np.ndarray:
        level = county_y.reindex(rows[KEY]).to_numpy(float)
        return np.where(np.isnan(level), np.nanmean(county_y), level)

    x_fit, x_new = _standardise(design(fit_rows), design(panel[test]))
    y_fit = fit_rows[target].to_numpy(float) - offset(fit_rows)
    n = len(features)
    keep = np.arange(x_fit.shape[1]) >= (0 if linear else n)  # the ridge's columns
    ridge = Ridge(alpha=alpha).fit(x_fit * keep, y_fit)
    prediction = offset(panel[test]) + ridge.predict(x_new * keep)
    if learner is not None:
        model = LEARNERS[learner]().fit(x_fit[:, :n], y_fit - ridge.predict(x_fit * keep))
        prediction = prediction + model.predict(x_new[:, :n])
    return prediction


def _anomalies(panel: pd.DataFrame, rows: np.ndarray, columns: list[str]) -> pd.DataFrame:
    """Each column minus its year mean over `rows` (the counties the year mean is taken from)."""
    year_mean = panel[rows].groupby(YEAR)[columns].mean()
    return panel[columns] - year_mean.reindex(panel[YEAR]).to_numpy()


def transfer_fit_predict(panel: pd.DataFrame, entities: pd.DataFrame, public: np.ndarray,
                         test: np.ndarray, target: str, features: list[str],
                         learner: str = "boost", folds: int = 4) -> np.ndarray:
    """Predict `target` of never-observed counties (`test` rows) from the `public` rows."""
    static = [c for c in STATIC if c in entities.columns and entities[c].notna().any()]
    table = panel.join(entities[static].astype(float), on=KEY)
    x_all = pd.concat([_anomalies(table, public, features), table[static]], axis=1)
    year_mean = table[public].groupby(YEAR)[target].mean()
    # Cross-fitting: a training county's year mean excludes its own fold, as a new county's would.
    counties = np.array(sorted(table.loc[public, KEY].unique()))
    fold_of = {c: i % folds for i, c in enumerate(counties)}
    y_dev = np.full(len(table), np.nan)
    for fold in range(folds):
        inside = table[KEY].map(fold_of).to_numpy() == fold
        others = public & ~inside
        means = table[others].groupby(YEAR)[target].mean()
        y_dev[public & inside] = (table[target] - means.reindex(table[YEAR]).to_numpy())[public & inside]
    ok = public & ~np.isnan(y_dev)
    model = LEARNERS[learner]().fit(np.nan_to_num(x_all[ok].to_numpy(float)), y_dev[ok])
    base = year_mean.reindex(table.loc[test, YEAR]).to_numpy(float)
    base = np.where(np.isnan(base), np.nanmean(year_mean), base)
    return base + model.predict(np.nan_to_num(x_all[test].to_numpy(float)))


def additive_fill(panel: pd.DataFrame, observed: np.ndarray, target: str, features: list[str],
                  alpha: float = 10.0, sweeps: int = 20) -> np.ndarray:
    """County + year effects fitted on `observed` rows, plus a ridge on feature anomalies; all rows."""
    y = panel[target].to_numpy(float)
    county, year = panel[KEY].to_numpy(), panel[YEAR].to_numpy()
    c_eff, y_eff = pd.Series(0.0, index=np.unique(county)), pd.Series(0.0, index=np.unique(year))
    grand = np.nanmean(y[observed])
    for _ in range(sweeps):
        rest = y - grand - y_eff.reindex(year).to_numpy()
        c_eff = pd.Series(rest[observed]).groupby(county[observed]).mean().reindex(c_eff.index).fillna(0.0)
        rest = y - grand - c_eff.reindex(county).to_numpy()
        y_eff = pd.Series(rest[observed]).groupby(year[observed]).mean().reindex(y_eff.index).fillna(0.0)
    fitted = grand + c_eff.reindex(county).to_numpy() + y_eff.reindex(year).to_numpy()
    if not features:
        return fitted
    x = panel[features].astype(float)
    x = x - x.groupby(panel[KEY]).transform("mean")
    x = (x - x.groupby(panel[YEAR]).transform("mean")).to_numpy()
    x_fit, x_all = _standardise(x[observed], x)
    ridge = Ridge(alpha=alpha).fit(x_fit, (y - fitted)[observed])
    return fitted + ridge.predict(x_all)


def validation_split(panel: pd.DataFrame, known: np.ndarray, years: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit, check) masks: the last `years` harvest years of the known rows are the check."""
    cut = np.sort(panel.loc[known, YEAR].unique())[-years]
    check = known & (panel[YEAR].to_numpy() >= cut)
    return known & ~check, check


def knn_fill(panel: pd.DataFrame, observed: np.ndarray, target: str, k: int = 8) -> np.ndarray:
    """KNNimpute on the county x year table: a county's mean plus its k most similar counties' anomalies.

    Similarity is the correlation of yield anomalies (value - county mean) over co-observed years
    (at least 5); a neighbour's anomaly in the missing year is weighted by its correlation. With no
    usable neighbour the year's mean anomaly over every county stands in.
    """
    table = panel.assign(_y=np.where(observed, panel[target], np.nan)).pivot(index=YEAR, columns=KEY, values="_y")
    anomaly = table - table.mean()
    corr = anomaly.corr(min_periods=5).to_numpy().copy()
    np.fill_diagonal(corr, np.nan)
    values, year_mean = anomaly.to_numpy(), anomaly.mean(axis=1).fillna(0.0).to_numpy()
    years = {y: i for i, y in enumerate(table.index)}
    counties = {c: j for j, c in enumerate(table.columns)}
    out = np.empty(len(panel))
    for row, (county, year) in enumerate(zip(panel[KEY], panel[YEAR], strict=True)):
        i, j = years[year], counties[county]
        usable = ~np.isnan(values[i]) & ~np.isnan(corr[j]) & (np.nan_to_num(corr[j]) > 0)
        order = np.flatnonzero(usable)[np.argsort(-corr[j][usable], kind="stable")][:k]
        weights = corr[j][order]
        fill = float(weights @ values[i, order] / weights.sum()) if len(order) else year_mean[i]
        out[row] = table.iloc[:, j].mean() + fill
    return out


def profile_space(frame: pd.DataFrame, time: str, column: str, features: list[str]) -> pd.DataFrame:
    """Per-county features of `column` (the prompt's definitions), z-scored across counties."""
    rows = {}
    for county, group in frame.sort_values([KEY, time]).groupby(KEY, sort=True):
        group = group[group[column].notna()]
        x = group[column].to_numpy(float)
        t = group[time]
        years = (t - t.iloc[0]).dt.total_seconds().to_numpy() / (365.25 * 86400)
        mean, std = x.mean(), x.std()
        monthly = pd.Series(x).groupby(t.dt.month.to_numpy()).mean()
        lag = np.corrcoef(x[:-1], x[1:])[0, 1] if len(x) > 2 and x[:-1].std() > 0 and x[1:].std() > 0 else 0.0
        every = {"mean": mean, "std": std, "cv": std / abs(mean) if mean else 0.0,
                 "q10": np.quantile(x, 0.1), "q90": np.quantile(x, 0.9), "lag1": lag,
                 "seasonal_amplitude": monthly.max() - monthly.min(),
                 "trend": np.polyfit(years, x, 1)[0] if np.ptp(years) > 0 else 0.0}
        rows[county] = [every[name] for name in features]
    raw = pd.DataFrame.from_dict(rows, orient="index", columns=features)
    spread = raw.std(ddof=0)
    return (raw - raw.mean()) / spread.where(spread > 0, 1.0)


def best_kmeans(space: pd.DataFrame, k_max: int = 6) -> tuple[np.ndarray, float]:
    """k-means (k-means++, 50 restarts) for k = 2..k_max; the labels of the best mean silhouette."""
    best = (-np.inf, None)
    for k in range(2, min(k_max, len(space) - 1) + 1):
        labels = KMeans(n_clusters=k, n_init=50, random_state=0).fit_predict(space.to_numpy())
        score = silhouette_score(space.to_numpy(), labels)
        if score > best[0] + 1e-12:
            best = (score, labels)
    return best[1], float(best[0])


def bagged_transfer(panel: pd.DataFrame, entities: pd.DataFrame, public: np.ndarray, test: np.ndarray,
                    target: str, features: list[str], rounds: int = 10) -> np.ndarray:
    """Bootstrap aggregation of `transfer_fit_predict` over the public counties (seeded, with replacement).

    Each round draws as many public counties as there are, with replacement; a county drawn twice
    enters twice (as two renamed copies). The rounds' predictions are averaged.
    """
    rng = np.random.default_rng(0)
    counties = np.array(sorted(panel.loc[public, KEY].unique()))
    new = panel[test]
    total = np.zeros(int(test.sum()))
    for _ in range(rounds):
        draw = rng.choice(counties, size=len(counties), replace=True)
        copies = [panel[(panel[KEY] == c).to_numpy() & public].assign(**{KEY: f"{c}#{i}"})
                  for i, c in enumerate(draw)]
        sample = pd.concat([*copies, new], ignore_index=True)
        meta = pd.concat([entities.loc[[c for c in draw]].set_axis([f"{c}#{i}" for i, c in enumerate(draw)]),
                          entities.loc[entities.index.isin(new[KEY])]])
        inside = np.arange(len(sample)) < len(sample) - len(new)
        total += transfer_fit_predict(sample, meta, inside, ~inside, target, features)
    return total / rounds
