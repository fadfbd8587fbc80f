"""Learners shared by the camels annotator scripts: per-basin and pooled models, validation splits.

The second module of the library (`camels_annotator` reads a query and builds forcing features).
Every learner is deterministic (fixed `random_state`, no early stopping, one thread). Frames are
sorted by basin and date, as `camels_annotator.read_timeseries` returns them; masks and
predictions are aligned with their rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import read_artifact_spec, read_scope, write_artifact
from camels_annotator import FORCING, basin_features, read_timeseries
from metrics import kge, nse
from sklearn.ensemble import HistGradientBoostingRegressor

# Static attributes a pooled model may read where a task stages them (climate, topography, land).
ATTRIBUTES = ("gauge_lat_deg", "gauge_lon_deg", "elev_mean_m", "slope_mean_m_km", "area_gages2_km2",
              "p_mean_mm_d", "pet_mean_mm_d", "aridity", "frac_snow", "p_seasonality", "frac_forest",
              "high_prec_freq_d_yr", "low_prec_freq_d_yr", "soil_depth_statsgo_m",
              "geol_permeability_log10_m2", "soil_porosity", "max_water_content_m")
VALIDATION_SHARE = 0.2
Simulator = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (fit rows, predict rows) -> values


@dataclass(frozen=True)
class Query:
    """A staged query's scope, artifact block, time series and the masks most scripts need."""

    scope: dict
    artifact: dict
    frame: pd.DataFrame  # the scope's rows, sorted by basin and date
    key: str
    obs: np.ndarray  # the artifact's target column (NaN where null in data/)
    basins: np.ndarray

    @property
    def test(self) -> np.ndarray:
        """Rows of the holdout test period (from the artifact block's first day on)."""
        return (self.frame["date"] >= pd.Timestamp(self.artifact["rows"]["from"])).to_numpy()

    @property
    def train(self) -> np.ndarray:
        """Rows before the test period whose target is observed."""
        return ~self.test & ~np.isnan(self.obs)

    def validate(self, simulate: Simulator) -> pd.DataFrame:
        """Per-basin scores (`scores`) of `simulate` fitted on the early training rows, scored on the
        late ones (`validation_split`)."""
        early, late = validation_split(self.frame["date"], self.train)
        return scores(self.obs[late], simulate(early, late), self.basins[late])

    def write_rows(self, rows: np.ndarray, columns: dict[str, np.ndarray]) -> None:
        """Write the artifact: basin and date of the selected rows plus the value columns, in the
        order given."""
        out = self.frame.loc[rows, [self.key, "date"]].reset_index(drop=True)
        for name, values in columns.items():
            out[name] = np.asarray(values, dtype=float)
        write_artifact(out, self.artifact, select=False)


def read_query(columns: list[str], target: str = "qobs_mm_d") -> Query:
    """Read prompt.md and data/ of the query in the current directory."""
    scope, artifact = read_scope(), read_artifact_spec()
    frame = read_timeseries(Path("data"), scope, sorted({*columns, target}))
    key = scope["entity_key"]
    return Query(scope, artifact, frame, key, frame[target].to_numpy(dtype=float),
                 frame[key].to_numpy())


def boosted(max_iter: int = 120, learning_rate: float = 0.08, max_leaf_nodes: int = 15,
            min_samples_leaf: int = 20) -> HistGradientBoostingRegressor:
    """The library's gradient-boosted tree ensemble (deterministic, no early stopping)."""
    return HistGradientBoostingRegressor(max_iter=max_iter, learning_rate=learning_rate,
                                         max_leaf_nodes=max_leaf_nodes,
                                         min_samples_leaf=min_samples_leaf, l2_regularization=1.0,
                                         early_stopping=False, random_state=0)


def binned(fit_rows: pd.DataFrame, predict_rows: pd.DataFrame,
           max_bins: int = 255) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each feature as its bin under the fit rows' (unweighted) quantile edges, as the booster bins
    them unweighted. A weighted fit then keeps these edges: scikit-learn 1.9 finds weighted ones one
    percentile at a time (one basin's 10 years, 8 features: 1.37 s against 0.27 s, one thread)."""
    fit_out, predict_out = fit_rows.copy(), predict_rows.copy()
    levels = np.linspace(0, 100, max_bins + 1)[1:-1]
    for column in fit_rows.columns:
        values = fit_rows[column].to_numpy(float)
        values = values[~np.isnan(values)]
        if len(np.unique(values)) <= max_bins:  # the booster splits between these values as they are
            continue
        edges = np.unique(np.percentile(values, levels, method="averaged_inverted_cdf"))
        for out, rows in ((fit_out, fit_rows), (predict_out, predict_rows)):
            x = rows[column].to_numpy(float)
            out[column] = np.where(np.isnan(x), np.nan, np.searchsorted(edges, x, side="left"))
    return fit_out, predict_out


def read_entities(data_dir: Path, scope: dict) -> pd.DataFrame:
    """The staged entities table of the scope's basins, indexed by the entity key (as text)."""
    key = scope["entity_key"]
    entities = pd.read_parquet(data_dir / "entities.parquet")
    entities[key] = entities[key].astype(str)
    return entities[entities[key].isin(scope["entities"])].set_index(key).sort_index()


def featurize(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """Forcing-only features (`basin_features`) of every basin, aligned with `frame`'s rows."""
    parts = [basin_features(basin) for _, basin in frame.groupby(key, sort=False)]
    return pd.concat(parts).loc[frame.index]


def with_attributes(features: pd.DataFrame, frame: pd.DataFrame, entities: pd.DataFrame,
                    key: str) -> pd.DataFrame:
    """`features` plus every staged static attribute of `ATTRIBUTES`, repeated on each day."""
    columns = [c for c in ATTRIBUTES if c in entities.columns]
    static = entities.loc[frame[key], columns].to_numpy(dtype=float)
    return features.assign(**{c: static[:, i] for i, c in enumerate(columns)})


def attributed_features(q: Query, features: pd.DataFrame | None = None) -> pd.DataFrame:
    """`features` (default: `featurize` of the query's rows) plus the staged static attributes."""
    features = featurize(q.frame, q.key) if features is None else features
    return with_attributes(features, q.frame, read_entities(Path("data"), q.scope), q.key)


def precipitation_scale(frame: pd.DataFrame, key: str) -> np.ndarray:
    """Each row's basin mean precipitation (mm/d, whole scope, at least 0.1): a flow scale that
    is known in ungauged basins too."""
    means = frame.groupby(key)["prcp_mm_d"].transform("mean").to_numpy(dtype=float)
    return np.maximum(np.nan_to_num(means, nan=1.0), 0.1)


def pooled(features: pd.DataFrame, target: np.ndarray, scale: np.ndarray, **kwargs) -> Simulator:
    """One model for every basin, fitted on target / scale (scale-free runoff), rescaled back."""
    def simulate(fit: np.ndarray, predict: np.ndarray) -> np.ndarray:
        model = boosted(**kwargs).fit(features[fit], target[fit] / scale[fit])
        return np.clip(model.predict(features[predict]) * scale[predict], 0.0, None)
    return simulate


def local(features: pd.DataFrame, target: np.ndarray, basins: np.ndarray, weight_power: float = 0.0,
          **kwargs) -> Simulator:
    """One model per basin, fitted on that basin's rows only; `weight_power` > 0 weights each
    day by (flow / mean flow) ** power, so high flows count more in the fit."""
    def simulate(fit: np.ndarray, predict: np.ndarray) -> np.ndarray:
        out = np.zeros(len(target))
        for basin in np.unique(basins[predict]):
            own = basins == basin
            if (fit & own).sum() < 30:  # too short to fit: the basin's mean
                out[predict & own] = np.nanmean(target[fit & own]) if (fit & own).any() else 0.0
                continue
            y = target[fit & own]
            x_fit, x_predict = features[fit & own], features[predict & own]
            weight = None  # unit weights: scikit-learn's weighted binning is slow (see `binned`)
            if weight_power:
                weight = (y / max(y.mean(), 1e-6) + 0.1) ** weight_power
                x_fit, x_predict = binned(x_fit, x_predict)
            model = boosted(**kwargs).fit(x_fit, y, sample_weight=weight)
            out[predict & own] = model.predict(x_predict)
        return np.clip(out[predict], 0.0, None)
    return simulate


def validation_split(dates: pd.Series, train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(early, late): the training rows before / from the day that leaves the last 20 % of the
    training period for validation."""
    days = np.sort(dates[train].unique())
    cut = days[int(len(days) * (1 - VALIDATION_SHARE))]
    late = train & (dates >= cut).to_numpy()
    return train & ~late, late


def scores(obs: np.ndarray, sim: np.ndarray, basins: np.ndarray) -> pd.DataFrame:
    """NSE, KGE, r^2 and |alpha - 1| per basin (observed rows; constant-flow basins left out)."""
    rows = []
    for basin in np.unique(basins):
        own = (basins == basin) & ~np.isnan(obs)
        o, s = obs[own], sim[own]
        if own.sum() > 2 and np.ptp(o) > 0 and o.mean() > 0:
            r = np.corrcoef(o, s)[0, 1] if np.ptp(s) > 0 else 0.0
            rows.append({"basin": basin, "nse": nse(o, s), "kge": kge(o, s), "r2": r**2,
                         "variability_error": abs(s.std() / o.std() - 1)})
    return pd.DataFrame(rows, columns=["basin", "nse", "kge", "r2", "variability_error"]).set_index("basin")


def median_of(table: pd.DataFrame, column: str) -> float:
    """Median of a score column rounded for answer.json (nan when no basin has a score)."""
    values = table[column].dropna()
    return round(float(values.median()), 6) if len(values) else float("nan")


def fine_tuned(features: pd.DataFrame, target: np.ndarray, basins: np.ndarray,
               scale: np.ndarray) -> Simulator:
    """A pooled model pre-trained on every basin, then refined per basin: each basin's own
    ensemble reads the pooled simulation as one more input (transfer by stacking)."""
    def simulate(fit: np.ndarray, predict: np.ndarray) -> np.ndarray:
        rows = fit | predict
        base = np.zeros(len(target))
        base[rows] = pooled(features, target, scale, max_iter=80)(fit, rows)
        tuned = features.assign(pooled_sim=base)
        return local(tuned, target, basins, max_iter=60)(fit, predict)
    return simulate


def others_mean(frame: pd.DataFrame, key: str, column: str,
                groups: pd.Series | None = None) -> np.ndarray:
    """Per row, the mean of `column` over the other basins (of the same group) on the same day;
    NaN where no other basin has a value."""
    group = (groups.reindex(frame[key]).to_numpy() if groups is not None
             else np.zeros(len(frame), dtype=int))
    values = frame[column].to_numpy(dtype=float)
    parts = pd.DataFrame({"g": group, "d": frame["date"].to_numpy(), "v": values,
                          "n": ~np.isnan(values)})
    totals = parts.groupby(["g", "d"])[["v", "n"]].transform("sum")
    own = np.nan_to_num(values)
    count = totals["n"].to_numpy() - parts["n"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, (totals["v"].to_numpy() - own) / count, np.nan)


def held_out_masks(q: Query) -> tuple[np.ndarray, np.ndarray]:
    """(rows of the artifact block's held-out basins, observed rows of the public basins)."""
    held = np.isin(q.basins, q.artifact["rows"]["entities"])
    return held, ~held & ~np.isnan(q.obs)


def pseudo_ungauged(basins: np.ndarray, public: np.ndarray, share: float = 0.3) -> np.ndarray:
    """Rows of a seeded share of the public basins (at least one): a validation set of
    'ungauged' basins for an estimate of the held-out score."""
    pool = np.unique(basins[public])
    count = min(max(int(round(share * len(pool))), 1), len(pool) - 1)
    chosen = np.random.default_rng(0).choice(pool, size=count, replace=False)
    return np.isin(basins, chosen)


def run_ungauged(
        simulator: Callable[[Query, pd.DataFrame, pd.DataFrame], Simulator]) -> tuple[pd.DataFrame, np.ndarray]:
    """Run shape of the ungauged-basin tasks: simulate the artifact's held-out basins from the gauged ones.

    `simulator(q, features, entities)` builds the task's model (features: `featurize` plus the
    staged attributes, `with_attributes`; entities: `read_entities`).
    Its estimate treats a seeded 30 % of the gauged basins as ungauged (`pseudo_ungauged`); then
    the model fitted on every gauged basin simulates the held-out basins into the artifact
    (`qsim_mm_d`). Returns the estimate's per-basin scores and its errors on the observed days.
    """
    q = read_query(FORCING)
    entities = read_entities(Path("data"), q.scope)
    simulate = simulator(q, with_attributes(featurize(q.frame, q.key), q.frame, entities, q.key), entities)
    held, public = held_out_masks(q)
    check = pseudo_ungauged(q.basins, public)
    check_sim = simulate(public & ~check, check)
    q.write_rows(held, {"qsim_mm_d": simulate(public, held)})
    errors = (check_sim - q.obs[check])[~np.isnan(q.obs[check])]
    return scores(q.obs[check], check_sim, q.basins[check]), errors
