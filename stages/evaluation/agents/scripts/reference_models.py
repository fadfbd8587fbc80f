"""The standard reference models of each task category, as one standalone module.

The harness imports it at build time to grade each query's reference models on the scorer side
(`stages.grading.references`); the reference agents (`reference.py`) run the same code in the
sandbox, so a reference agent scores what the build recorded for its model. Standalone: numpy,
pandas and the workspace only (it is mounted at /agent).

Models (each returns the artifact's rows, every value column filled with the model's prediction):
- `climatology`: per entity, the mean of the target on each day of year over the days where it is
  public, smoothed with a 31-day circular window; the entity's mean where a day of year has none.
- `linear_forcing`: per entity, ordinary least squares of the target on the same day's forcing
  (every numeric column of the time series except the target and snow water equivalent).
- `interpolate`: per entity, linear interpolation of the target in time across its nulls (ends held).
- `region_partition`: labels = the entity's region (`huc_02`), the partition a reader gets for free.
- `mean_flow_split`: two clusters, entities at or below / above the median of the target's mean.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

BLOCKS = {name: re.compile(rf"## {name}\n.*?```json\n(?P<json>.*?)\n```", re.DOTALL)
          for name in ("Scope", "Artifact")}
NOT_FORCING = ("swe_mm",)
REGION = "huc_02"
WINDOW_DAYS = 31


def read_block(prompt: str, name: str) -> dict:
    """The JSON of the prompt's `## Scope` or `## Artifact` block."""
    match = BLOCKS[name].search(prompt)
    if match is None:
        raise ValueError(f"prompt has no '## {name}' block")
    return json.loads(match.group("json"))


def load_scoped(data_dir: Path, scope: dict) -> dict[str, pd.DataFrame]:
    """Every Parquet table of `data/`, restricted to the scope's entities (and dates)."""
    tables = {path.stem: pd.read_parquet(path) for path in sorted(data_dir.glob("*.parquet"))}
    return load_tables(tables, scope)


def load_tables(raw: dict[str, pd.DataFrame], scope: dict) -> dict[str, pd.DataFrame]:
    """Tables restricted to the scope's entities and dates, keys as text, dates as timestamps."""
    key, tables = scope["entity_key"], {}
    for name, frame in sorted(raw.items()):
        frame = frame.copy()
        if key in frame.columns:
            frame[key] = frame[key].astype(str)
            frame = frame[frame[key].isin(scope["entities"])]
        if "date" in frame.columns:
            frame["date"] = pd.to_datetime(frame["date"])
            frame = frame[frame["date"].between(pd.Timestamp(scope["start"]), pd.Timestamp(scope["end"]))]
            frame = frame.sort_values([key, "date"])
        tables[name] = frame.reset_index(drop=True)
    return tables


def required_rows(tables: dict[str, pd.DataFrame], scope: dict, artifact: dict) -> pd.DataFrame:
    """The key columns of every row the artifact must hold (the prompt's `rows` rule)."""
    key, rows = scope["entity_key"], artifact["rows"]
    if rows["kind"] == "entities":
        return pd.DataFrame({key: sorted(scope["entities"])})
    series = tables["timeseries"]
    if rows["kind"] == "holdout":
        test = series["date"].between(pd.Timestamp(rows["from"]), pd.Timestamp(rows["to"]))
        return series.loc[test, [key, "date"]].reset_index(drop=True)
    return series.loc[series[rows["column"]].isna(), [key, "date"]].reset_index(drop=True)


def _fill(required: pd.DataFrame, values: np.ndarray, artifact: dict) -> pd.DataFrame:
    out = required.copy()
    for column, dtype in artifact["columns"].items():
        out[column] = values.astype(int) if dtype == "int" else values.astype(float)
    return out


def climatology(tables: dict[str, pd.DataFrame], scope: dict, artifact: dict,
                required: pd.DataFrame) -> pd.DataFrame:
    """Smoothed day-of-year mean of the target per entity."""
    key, target, series = scope["entity_key"], artifact["rows"]["column"], tables["timeseries"]
    values = np.empty(len(required))
    for entity, rows in required.groupby(key).indices.items():
        history = series[(series[key] == entity) & series[target].notna()]
        by_day = history.groupby(history["date"].dt.dayofyear)[target].mean().reindex(range(1, 367))
        padded = pd.concat([by_day.iloc[-WINDOW_DAYS:], by_day, by_day.iloc[:WINDOW_DAYS]])
        smooth = padded.rolling(WINDOW_DAYS, center=True, min_periods=1).mean().iloc[WINDOW_DAYS:-WINDOW_DAYS]
        smooth = smooth.fillna(history[target].mean())
        values[rows] = smooth.to_numpy()[required["date"].iloc[rows].dt.dayofyear.to_numpy() - 1]
    return _fill(required, values, artifact)


def linear_forcing(tables: dict[str, pd.DataFrame], scope: dict, artifact: dict,
                   required: pd.DataFrame) -> pd.DataFrame:
    """Per-entity least squares of the target on the same day's forcing."""
    key, target, series = scope["entity_key"], artifact["rows"]["column"], tables["timeseries"]
    forcing = [c for c in series.columns if c not in (key, "date", target, *NOT_FORCING)
               and pd.api.types.is_float_dtype(series[c])]
    indexed = series.set_index([key, "date"])
    values = np.empty(len(required))
    for entity, rows in required.groupby(key).indices.items():
        own = series[series[key] == entity]
        fit = own[own[target].notna()]
        x = np.column_stack([np.ones(len(fit)), fit[forcing].fillna(fit[forcing].mean()).to_numpy()])
        coef = np.linalg.lstsq(x, fit[target].to_numpy(), rcond=None)[0]
        wanted = indexed.loc[list(zip([entity] * len(rows), required["date"].iloc[rows], strict=True)), forcing]
        x_new = np.column_stack([np.ones(len(rows)), wanted.fillna(fit[forcing].mean()).to_numpy()])
        values[rows] = np.clip(x_new @ coef, 0.0, None)
    return _fill(required, values, artifact)


def interpolate(tables: dict[str, pd.DataFrame], scope: dict, artifact: dict,
                required: pd.DataFrame) -> pd.DataFrame:
    """Linear interpolation of the target in time, per entity, ends held."""
    key, target, series = scope["entity_key"], artifact["rows"]["column"], tables["timeseries"]
    filled = series.assign(filled=series.groupby(key)[target].transform(
        lambda s: s.interpolate(limit_direction="both")))
    merged = required.merge(filled[[key, "date", "filled"]], on=[key, "date"], how="left")
    return _fill(required, merged["filled"].fillna(0.0).to_numpy(), artifact)


def region_partition(tables: dict[str, pd.DataFrame], scope: dict, artifact: dict,
                     required: pd.DataFrame) -> pd.DataFrame:
    """The entity's region as its cluster label."""
    key = scope["entity_key"]
    regions = tables["entities"].set_index(key)[REGION].astype(str)
    codes = {region: i for i, region in enumerate(sorted(set(regions)))}
    labels = required[key].map(lambda e: codes[regions[e]]).to_numpy()
    return _fill(required, labels, artifact)


def mean_flow_split(tables: dict[str, pd.DataFrame], scope: dict, artifact: dict,
                    required: pd.DataFrame) -> pd.DataFrame:
    """Two clusters: entities whose mean target is above the scope's median, and the rest."""
    key, target = scope["entity_key"], artifact["rows"]["column"]
    means = tables["timeseries"].groupby(key)[target].mean()
    labels = required[key].map(lambda e: int(means[e] > means.median())).to_numpy()
    return _fill(required, labels, artifact)


MODELS = {
    "climatology": climatology,
    "linear_forcing": linear_forcing,
    "interpolate": interpolate,
    "region_partition": region_partition,
    "mean_flow_split": mean_flow_split,
}
