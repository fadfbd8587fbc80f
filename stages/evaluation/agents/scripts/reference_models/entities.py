"""The reference models across entities: the nearest entity's values, and two partitions of the entities.

`nearest_entity`, `region_partition` and `mean_flow_split` (the package's docstring says what each
predicts).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .inputs import _entities, _fill, _public, _where

REGIONS = ("huc_02", "site_classification", "state", "igbp", "country", "country_code", "region", "group")
LATITUDES, LONGITUDES = ("lat_deg", "gauge_lat_deg", "latitude"), ("lon_deg", "gauge_lon_deg", "longitude")


def _coordinates(entities: pd.DataFrame, key: str) -> pd.DataFrame:
    lat = next((c for c in LATITUDES if c in entities.columns), None)
    lon = next((c for c in LONGITUDES if c in entities.columns), None)
    if lat is None or lon is None:
        raise ValueError(f"the entities table has no latitude/longitude columns ({LATITUDES}, {LONGITUDES})")
    return entities.set_index(key)[[lat, lon]].astype(float).set_axis(["lat", "lon"], axis=1)


def nearest_entity(tables: dict, scope: dict, artifact: dict, required: pd.DataFrame) -> pd.DataFrame:
    """The target of the nearest entity with public values, at the same step."""
    key = scope["entity_key"]
    public, time, target = _public(tables, artifact)
    where = _coordinates(tables["entities"], key)
    donors, owing = (where.loc[where.index.isin(frame[key].unique())] for frame in (public, required))
    lat, lon = owing["lat"].to_numpy()[:, None], owing["lon"].to_numpy()[:, None]
    distance = np.hypot(donors["lat"].to_numpy() - lat, (donors["lon"].to_numpy() - lon) * np.cos(np.radians(lat)))
    itself = owing.index.to_numpy()[:, None] == donors.index.to_numpy()
    distance = pd.DataFrame(np.where(itself, np.nan, distance), index=owing.index, columns=donors.index)
    donor = required[key].map(distance[~itself.all(axis=1)].idxmin(axis=1)).astype(public[key].dtype)
    steps = required[[time]].assign(**{key: donor})
    _, donor_codes, _, means = _entities(public, target, steps, key)
    found = steps.merge(public[[key, time, target]], on=[key, time], how="left")[target].to_numpy(dtype=float)
    values = np.where(np.isnan(found), means[donor_codes], found)
    return _fill(required, np.where(donor.isna(), public[target].mean() if len(public) else 0.0, values), artifact)


def region_partition(tables: dict, scope: dict, artifact: dict, required: pd.DataFrame) -> pd.DataFrame:
    """The entity's region as its cluster label."""
    key, entities = scope["entity_key"], tables["entities"]
    column = next((c for c in REGIONS if c in entities.columns and entities[c].nunique() > 1), None)
    regions = (entities.set_index(key)[column].astype(str) if column
               else pd.Series("all", index=entities[key]))
    codes = {region: i for i, region in enumerate(sorted(set(regions)))}
    labels = required[key].map(lambda e: codes.get(regions.get(e), 0)).to_numpy()
    return _fill(required, labels, artifact)


def mean_flow_split(tables: dict, scope: dict, artifact: dict, required: pd.DataFrame) -> pd.DataFrame:
    """Two clusters: entities whose mean target is above the scope's median, and the rest."""
    key = scope["entity_key"]
    name, _, target = _where(artifact)
    source = tables[name] if target in tables.get(name, pd.DataFrame()).columns else tables["timeseries"]
    if target not in source.columns:  # a hidden label: split on the first numeric column instead
        target = next(c for c in source.columns if c != key and pd.api.types.is_float_dtype(source[c]))
    means = source.groupby(key)[target].mean()
    own = required[key].map(means).where(required[key].isin(means.index), 0.0)  # 0 without rows
    labels = (own > means.median()).astype(int).to_numpy()
    return _fill(required, labels, artifact)
