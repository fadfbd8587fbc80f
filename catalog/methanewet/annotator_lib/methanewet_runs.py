"""The query shapes of the methanewet tasks, end to end: read, fit, write, estimate.

Four shapes of the daily tasks; `metrics` maps each answer metric to (score function, aggregate)
as the task grades it:
- `run_gap_filling`: fill every null day of the target; estimate on pseudo-gaps.
- `run_holdout`: predict the withheld test period; estimate on the end of the training period.
- `run_held_out_sites`: predict sites without measurements; estimate by site folds.
- `run_partition`: cluster sites by profile features; report the partition's silhouette.

Three shapes of the half-hourly tasks write the artifact and return the check frame (site,
observed, filled per row of a pseudo-test) from which the task's metrics are estimated
(`check_scores`, or the task's own where one is not a per-site score: volume bias, weekly means):
- `run_halfhourly_fill`: fill every null flux; check on seeded pseudo-gaps (`fill_halfhourly`
  also writes the answer).
- `run_halfhourly_forecast`: predict the withheld test period; check one test period earlier
  (`forecast_halfhourly` also writes the answer).
- `run_halfhourly_held_out_sites`: predict sites without measurements; check on every third public site.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import read_artifact_spec, read_scope, write_answer, write_artifact
from methanewet_annotator import KEY, SCORES, TARGET, best_partition, profile_features, read_daily, read_sites, score
from methanewet_halfhourly import TIME, driver_features, owed_rows, read_halfhourly
from methanewet_halfhourly_models import check_fill, fill_gaps, forecast, validate_forecast
from methanewet_models import Setup, fill, predict, pseudo_gaps, upscale

Metrics = dict[str, tuple[str, str]]
SiteMethod = Callable[[pd.DataFrame, pd.DataFrame, list[str]], np.ndarray]  # (frame, features, held) -> flux
VALIDATION_SHARE = 0.3  # the end of the training period that estimates a holdout's metrics


def _query() -> tuple[dict, dict, pd.DataFrame]:
    scope, artifact = read_scope(), read_artifact_spec()
    return scope, artifact, read_daily(Path("data"), scope)


def _scores(frame: pd.DataFrame, target: str, metrics: Metrics) -> dict[str, float]:
    return {name: score(frame, target, "sim", function, how) for name, (function, how) in metrics.items()}


def run_gap_filling(setup: Setup, metrics: Metrics, share: float, run_days: tuple[int, int]) -> None:
    """Fill the null target days; estimate the metrics on seeded pseudo-gaps like the hidden ones."""
    scope, artifact, frame = _query()
    column = next(iter(artifact["columns"]))
    known = frame[setup.target].notna().to_numpy()
    frame[column] = fill(frame, setup, known)
    write_artifact(frame[~known], artifact)
    hidden = pseudo_gaps(frame, setup.target, share, run_days)
    check = frame.assign(sim=fill(frame, setup, known & ~hidden))[hidden]
    write_answer(metrics=_scores(check, setup.target, metrics))


def run_holdout(setup: Setup, metrics: Metrics, method: Callable = predict) -> None:
    """Predict the test period from the training period; estimate on the training period's end."""
    scope, artifact, frame = _query()
    column = next(iter(artifact["columns"]))
    first = pd.Timestamp(artifact["rows"]["from"])
    train = (frame["date"] < first).to_numpy()
    frame[column] = method(frame, setup, train)
    write_artifact(frame[~train], artifact)
    start = frame["date"].min()
    cut = start + (first - start) * (1 - VALIDATION_SHARE)
    inner = train & (frame["date"] < cut).to_numpy()
    check = frame.assign(sim=method(frame, setup, inner))[train & ~inner]
    write_answer(metrics=_scores(check, setup.target, metrics))


def run_held_out_sites(setup: Setup, metrics: Metrics, folds: int = 3) -> None:
    """Predict the held-out sites from the others; estimate by leaving folds of public sites out."""
    scope, artifact, frame = _query()
    column = next(iter(artifact["columns"]))
    sites = read_sites(Path("data"), scope)
    held = set(artifact["rows"]["entities"])
    public = ~frame[KEY].isin(held).to_numpy()
    frame[column] = upscale(frame, sites, setup, public)
    write_artifact(frame[~public], artifact)
    names = np.array(sorted(set(frame.loc[public, KEY])))
    order = np.random.default_rng(0).permutation(len(names))
    check = []
    for fold in range(min(folds, len(names))):
        out = set(names[order[fold::folds]])
        rows = frame[KEY].isin(out).to_numpy()
        check.append(frame.assign(sim=upscale(frame, sites, setup, public & ~rows))[rows])
    write_answer(metrics=_scores(pd.concat(check), setup.target, metrics))


def run_partition(column: str, features: list[str], max_clusters: int = 6) -> None:
    """Cluster the scope's sites in the profile space of `column`; report its silhouette."""
    scope, artifact, frame = _query()
    space = profile_features(frame, column, features)
    labels, silhouette = best_partition(space, max_clusters)
    out = pd.DataFrame({KEY: space.index, next(iter(artifact["columns"])): labels.astype(int)})
    write_artifact(out, artifact)
    write_answer(metrics={"silhouette": silhouette})


def read_halfhourly_query() -> tuple[dict, dict, pd.DataFrame, pd.DataFrame]:
    """(scope, artifact block, half-hourly rows, sites) of the query in the current directory."""
    data = Path("data")
    scope, artifact = read_scope(), read_artifact_spec()
    return scope, artifact, read_halfhourly(data, scope), read_sites(data, scope)


def write_rows(artifact: dict, frame: pd.DataFrame, rows: np.ndarray, values: np.ndarray) -> None:
    """Write the artifact: site and time of the `rows`, with `values` as its value column."""
    column = next(iter(artifact["columns"]))
    write_artifact(frame.loc[rows, [KEY, TIME]].assign(**{column: values}), artifact)


def check_rows(frame: pd.DataFrame, rows: np.ndarray, filled: np.ndarray) -> pd.DataFrame:
    """The check frame of a pseudo-test: (site, observed flux, `filled`) of the `rows`."""
    return pd.DataFrame({KEY: frame.loc[rows, KEY], "observed": frame.loc[rows, TARGET], "filled": filled[rows]})


def check_scores(check: pd.DataFrame, metrics: Metrics) -> dict[str, float]:
    """Each answer metric of a check frame: (score function, aggregate) as `score` computes it over
    the rows where both are defined, or aggregate `"all"`: the function over every check row as it is."""
    return {name: SCORES[function](check["observed"], check["filled"]) if how == "all"
            else score(check, "observed", "filled", function, how) for name, (function, how) in metrics.items()}


def run_halfhourly_fill(run_days: tuple[float, float], median: bool = False) -> pd.DataFrame:
    """Fill every null flux (`median`: back-transform to the median); check on pseudo-gaps of `run_days`."""
    _, artifact, frame, sites = read_halfhourly_query()
    features = driver_features(frame, sites)
    gaps = frame[TARGET].isna().to_numpy()
    write_rows(artifact, frame, gaps, fill_gaps(frame, features, median=median)[gaps])
    return check_fill(frame, features, run_days, median=median)


def fill_halfhourly(run_days: tuple[float, float], metrics: Metrics, median: bool = False) -> None:
    """The gap-filling tasks: `run_halfhourly_fill`, its check's `metrics` as the answer.

    Method: driver features per half-hour (`driver_features`: shallow soil temperature and its 1-,
    7- and 45-day growing-season pools, the water table below / above the surface, the local time
    of day, the season and the gap-filled meteorology; the flux itself is never a driver). Then
    `fill_gaps`: per site, a log-linear process model fitted by ridge regression on the observed
    intervals (Q10 temperature response, substrate pools, diurnal harmonics, water-table
    limitation), plus the model's departure from the observed fluxes at the gap's edges (the
    day-to-day anomaly the drivers miss), interpolated across the gap and fading with a 2-day time
    constant (`edge_anomaly`); back-transformed to the mean flux (`median`: the median). Every null
    flux of the scope is filled; the metrics are estimated on a seeded draw of pseudo-gaps of
    `run_days` days.
    """
    write_answer(metrics=check_scores(run_halfhourly_fill(run_days, median), metrics))


def run_halfhourly_forecast(shared: bool = False) -> pd.DataFrame:
    """Predict the test period (`shared`: one pooled response, per-site level); check one period earlier."""
    _, artifact, frame, sites = read_halfhourly_query()
    features, test = driver_features(frame, sites), owed_rows(frame, artifact)
    write_rows(artifact, frame, test, forecast(frame, features, test, shared=shared)[test])
    return validate_forecast(frame, features, test, shared=shared)


def forecast_halfhourly(metrics: Metrics, shared: bool = False) -> None:
    """The forecast tasks: `run_halfhourly_forecast`, its check's `metrics` as the answer.

    Method: the owed rows are every interval from the test day on. Driver features per interval
    (`driver_features`: shallow soil temperature, its 1-, 7- and 45-day growing-season pools (the
    substrate supply that lags temperature: late-season fluxes exceed early-season ones at one
    temperature), the water table below / above the surface, the local time of day (plant
    transport peaks in the early afternoon), the season and the gap-filled meteorology). Then
    `forecast`: a log-linear process model (Q10 temperature response, substrate pools, diurnal
    harmonics, water-table limitation) fitted by ridge regression on the observed intervals before
    the test period, per site or (`shared`) one response pooled over the sites with a level
    fine-tuned per site, plus the anomaly of the last observed day (the model's mean departure
    from the fluxes) decaying with a two-day time constant into the test period; back-transformed
    to the mean flux. The metrics are estimated by the same forecast one test-period length
    earlier on observed data.
    """
    write_answer(metrics=check_scores(run_halfhourly_forecast(shared), metrics))


def run_halfhourly_held_out_sites(method: SiteMethod, features: Callable = driver_features,
                                  ceiling: float | None = None) -> pd.DataFrame:
    """Predict the held-out sites with `method`, from `features(frame, sites)`; check by holding out
    every third public site. `ceiling`: clip to [0, ceiling x the observed maximum] (no extrapolation)."""
    _, artifact, frame, sites = read_halfhourly_query()
    feats, owed = features(frame, sites), owed_rows(frame, artifact)
    top = None if ceiling is None else ceiling * float(frame[TARGET].max())
    write_rows(artifact, frame, owed, _clipped(method(frame, feats, artifact["rows"]["entities"])[owed], top))
    inner = sorted(frame.loc[~owed, KEY].unique())[::3]
    public = frame[~owed].reset_index(drop=True)
    sim = _clipped(method(public, feats[~owed].reset_index(drop=True), inner), top)
    keep = public[KEY].isin(inner).to_numpy() & public[TARGET].notna().to_numpy()
    return check_rows(public, keep, sim)


def _clipped(values: np.ndarray, top: float | None) -> np.ndarray:
    return values if top is None else np.clip(values, 0.0, top)
