"""The four query shapes of the methanewet daily tasks, end to end: read, fit, write, estimate.

- `run_gap_filling`: fill every null day of the target; estimate on pseudo-gaps.
- `run_holdout`: predict the withheld test period; estimate on the end of the training period.
- `run_held_out_sites`: predict sites without measurements; estimate by site folds.
- `run_partition`: cluster sites by profile features; report the partition's silhouette.

`metrics` maps each answer metric to (score function, aggregate) as the task grades it.

Three query shapes of the half-hourly tasks write the artifact and return the check frame
(site, observed, filled per row of a pseudo-test) from which the task computes its own metrics
(some are not a per-site score: volume bias, weekly means):
- `run_halfhourly_fill`: fill every null flux; check on seeded pseudo-gaps.
- `run_halfhourly_forecast`: predict the withheld test period; check one test period earlier.
- `run_halfhourly_held_out_sites`: predict sites without measurements; check on every third public site.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from methanewet_annotator import (
    KEY,
    TARGET,
    best_partition,
    profile_features,
    read_artifact_spec,
    read_daily,
    read_scope,
    read_sites,
    score,
    write_answer,
    write_artifact,
)
from methanewet_halfhourly import (
    TIME,
    check_fill,
    driver_features,
    fill_gaps,
    forecast,
    owed_rows,
    read_halfhourly,
    validate_forecast,
)
from methanewet_models import Setup, fill, predict, pseudo_gaps, upscale

Metrics = dict[str, tuple[str, str]]
SiteMethod = Callable[[pd.DataFrame, pd.DataFrame, list[str]], np.ndarray]  # (frame, features, held) -> flux
VALIDATION_SHARE = 0.3  # the end of the training period that estimates a holdout's metrics


def _query() -> tuple[dict, dict, pd.DataFrame]:
    prompt = Path("prompt.md")
    scope, artifact = read_scope(prompt), read_artifact_spec(prompt)
    return scope, artifact, read_daily(Path("data"), scope)


def _scores(frame: pd.DataFrame, target: str, metrics: Metrics) -> dict[str, float]:
    return {name: score(frame, target, "sim", function, how) for name, (function, how) in metrics.items()}


def run_gap_filling(setup: Setup, metrics: Metrics, share: float, run_days: tuple[int, int]) -> None:
    """Fill the null target days; estimate the metrics on seeded pseudo-gaps like the hidden ones."""
    scope, artifact, frame = _query()
    column = next(iter(artifact["columns"]))
    known = frame[setup.target].notna().to_numpy()
    frame[column] = fill(frame, setup, known)
    write_artifact(artifact, frame[~known])
    hidden = pseudo_gaps(frame, setup.target, share, run_days)
    check = frame.assign(sim=fill(frame, setup, known & ~hidden))[hidden]
    write_answer(_scores(check, setup.target, metrics))


def run_holdout(setup: Setup, metrics: Metrics, method: Callable = predict) -> None:
    """Predict the test period from the training period; estimate on the training period's end."""
    scope, artifact, frame = _query()
    column = next(iter(artifact["columns"]))
    first = pd.Timestamp(artifact["rows"]["from"])
    train = (frame["date"] < first).to_numpy()
    frame[column] = method(frame, setup, train)
    write_artifact(artifact, frame[~train])
    start = frame["date"].min()
    cut = start + (first - start) * (1 - VALIDATION_SHARE)
    inner = train & (frame["date"] < cut).to_numpy()
    check = frame.assign(sim=method(frame, setup, inner))[train & ~inner]
    write_answer(_scores(check, setup.target, metrics))


def run_held_out_sites(setup: Setup, metrics: Metrics, folds: int = 3) -> None:
    """Predict the held-out sites from the others; estimate by leaving folds of public sites out."""
    scope, artifact, frame = _query()
    column = next(iter(artifact["columns"]))
    sites = read_sites(Path("data"), scope)
    held = set(artifact["rows"]["entities"])
    public = ~frame[KEY].isin(held).to_numpy()
    frame[column] = upscale(frame, sites, setup, public)
    write_artifact(artifact, frame[~public])
    names = np.array(sorted(set(frame.loc[public, KEY])))
    order = np.random.default_rng(0).permutation(len(names))
    check = []
    for fold in range(min(folds, len(names))):
        out = set(names[order[fold::folds]])
        rows = frame[KEY].isin(out).to_numpy()
        check.append(frame.assign(sim=upscale(frame, sites, setup, public & ~rows))[rows])
    write_answer(_scores(pd.concat(check), setup.target, metrics))


def run_partition(column: str, features: list[str], max_clusters: int = 6) -> None:
    """Cluster the scope's sites in the profile space of `column`; report its silhouette."""
    scope, artifact, frame = _query()
    space = profile_features(frame, column, features)
    labels, silhouette = best_partition(space, max_clusters)
    out = pd.DataFrame({KEY: space.index, next(iter(artifact["columns"])): labels.astype(int)})
    write_artifact(artifact, out)
    write_answer({"silhouette": silhouette})


def _halfhourly_query() -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    prompt, data = Path("prompt.md"), Path("data")
    scope, artifact = read_scope(prompt), read_artifact_spec(prompt)
    return artifact, read_halfhourly(data, scope), read_sites(data, scope)


def _write_rows(artifact: dict, frame: pd.DataFrame, rows: np.ndarray, values: np.ndarray) -> None:
    column = next(iter(artifact["columns"]))
    write_artifact(artifact, frame.loc[rows, [KEY, TIME]].assign(**{column: values}))


def run_halfhourly_fill(run_days: tuple[float, float], median: bool = False) -> pd.DataFrame:
    """Fill every null flux (`median`: back-transform to the median); check on pseudo-gaps of `run_days`."""
    artifact, frame, sites = _halfhourly_query()
    features = driver_features(frame, sites)
    gaps = frame[TARGET].isna().to_numpy()
    _write_rows(artifact, frame, gaps, fill_gaps(frame, features, median=median)[gaps])
    return check_fill(frame, features, run_days, median=median)


def run_halfhourly_forecast(shared: bool = False) -> pd.DataFrame:
    """Predict the test period (`shared`: one pooled response, per-site level); check one period earlier."""
    artifact, frame, sites = _halfhourly_query()
    features, test = driver_features(frame, sites), owed_rows(frame, artifact)
    _write_rows(artifact, frame, test, forecast(frame, features, test, shared=shared)[test])
    return validate_forecast(frame, features, test, shared=shared)


def run_halfhourly_held_out_sites(method: SiteMethod, features: Callable = driver_features,
                                  ceiling: float | None = None) -> pd.DataFrame:
    """Predict the held-out sites with `method`, from `features(frame, sites)`; check by holding out
    every third public site. `ceiling`: clip to [0, ceiling x the observed maximum] (no extrapolation)."""
    artifact, frame, sites = _halfhourly_query()
    feats, owed = features(frame, sites), owed_rows(frame, artifact)
    top = None if ceiling is None else ceiling * float(frame[TARGET].max())
    _write_rows(artifact, frame, owed, _clipped(method(frame, feats, artifact["rows"]["entities"])[owed], top))
    inner = sorted(frame.loc[~owed, KEY].unique())[::3]
    public = frame[~owed].reset_index(drop=True)
    sim = _clipped(method(public, feats[~owed].reset_index(drop=True), inner), top)
    keep = public[KEY].isin(inner).to_numpy() & public[TARGET].notna().to_numpy()
    return pd.DataFrame({KEY: public.loc[keep, KEY], "observed": public.loc[keep, TARGET], "filled": sim[keep]})


def _clipped(values: np.ndarray, top: float | None) -> np.ndarray:
    return values if top is None else np.clip(values, 0.0, top)
