"""The `methanewet` repository: FLUXNET-CH4 wetland sites, their daily and half-hourly records.

Keys: `site_id` (FLUXNET site code, e.g. `US-Myb`) for entities; `site_id` + `date` (local
standard day) for the daily `timeseries`; `site_id` + `timestamp_start` (UTC, or local standard
time when the source was read so; the manifest's unit says which) for `halfhourly`.
`entities` holds one row per site with data: the source's `sites` table (product, record span,
resolution, UTC offset, and lat/lon/class from the FLUXNET-CH4 site metadata file when present)
plus statistics of the daily record (record length, measured-flux days, mean fluxes, mean
temperature and water table).

With the `imagery` source among the domain's sources, each site with coordinates is given the
statistics of the imagery mosaic over a 1 km square around its tower (never less than the pixel it
stands in): `image_stats` (site_id, variable, date), `image_static` (site_id, variable) and summary
columns on `entities` such as `relief_mean_m` and `ndvi_max` (see `imagery_join`). Sites outside
the mosaic, or without coordinates, keep null image statistics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stages.domains.imagery_join import entity_imagery, square_footprints
from stages.tables import Table

ENTITY_KEY = "site_id"
SOURCE = "fluxnet_ch4"
IMAGERY = "imagery"
SITE_FOOTPRINT_M = 1000.0  # side of the square around a tower: the flux footprint's order of size
DAILY_MEANS = {  # entity column -> (daily column, unit)
    "fch4_mean_nmol_m2_s": ("fch4_nmol_m2_s", "nmol/m2/s"),
    "fch4_f_annoptlm_mean_nmol_m2_s": ("fch4_f_annoptlm_nmol_m2_s", "nmol/m2/s"),
    "ta_f_mean_c": ("ta_f_c", "degC"),
    "wtd_mean_m": ("wtd_m", "m"),
}
RECORD_UNITS = {"record_days": "d", "fch4_measured_days": "d"}


def align(inputs: dict[str, dict]) -> list[Table]:
    """Build `entities`, `timeseries` (daily), `halfhourly` (and the image tables, with imagery)."""
    source = inputs[SOURCE]
    tables = source.manifest["tables"]
    daily, halfhourly = source["daily"], source["halfhourly"]
    entities = source["sites"].merge(daily_statistics(daily), on=ENTITY_KEY, how="left",
                                     validate="one_to_one")
    entities["record_days"] = record_days(entities)
    entities = entities.sort_values(ENTITY_KEY, ignore_index=True)
    entity_units = _units(tables["sites"]) | RECORD_UNITS | {c: u for c, (_, u) in DAILY_MEANS.items()}
    image_tables = []
    if IMAGERY in inputs:
        footprints = square_footprints(entities["lon_deg"], entities["lat_deg"], SITE_FOOTPRINT_M)
        joined = entity_imagery(inputs[IMAGERY], entities, [ENTITY_KEY], footprints)
        entities = entities.merge(joined.summary, on=ENTITY_KEY, how="left", validate="one_to_one")
        entity_units |= joined.summary_units
        image_tables = joined.tables
    return [
        Table("entities", entities, keys=(ENTITY_KEY,), units=entity_units),
        Table("timeseries", daily.reset_index(drop=True), keys=(ENTITY_KEY, "date"),
              units=_units(tables["daily"])),
        Table("halfhourly", halfhourly.reset_index(drop=True), keys=(ENTITY_KEY, "timestamp_start"),
              units=_units(tables["halfhourly"])),
        *image_tables,
    ]


def daily_statistics(daily: pd.DataFrame) -> pd.DataFrame:
    """Per site: days with measured FCH4 and the means of `DAILY_MEANS` (null if the column is absent)."""
    groups = daily.groupby(ENTITY_KEY, sort=True)
    stats = pd.DataFrame({ENTITY_KEY: pd.array(list(groups.groups), dtype="string")})
    measured = groups["fch4_nmol_m2_s"].count() if "fch4_nmol_m2_s" in daily else None
    stats["fch4_measured_days"] = pd.array(
        [pd.NA] * len(stats) if measured is None else measured.to_numpy(), dtype="Int64")
    for column, (source_column, _) in DAILY_MEANS.items():
        means = groups[source_column].mean().to_numpy() if source_column in daily else np.nan
        stats[column] = np.asarray(np.broadcast_to(means, len(stats)), dtype="float64")
    return stats


def record_days(entities: pd.DataFrame) -> pd.Series:
    """Record length in days: the daily span, else the sub-daily span (null if neither)."""
    first = pd.to_datetime(entities["first_date"].astype("object"))
    last = pd.to_datetime(entities["last_date"].astype("object"))
    days = (last - first).dt.days.astype("float64") + 1
    span = entities["last_timestamp_end"] - entities["first_timestamp_start"]
    return days.fillna(span.dt.total_seconds() / 86400).astype("float64")


def _units(entry: dict) -> dict[str, str]:
    """Units of a source table's columns as its manifest recorded them (key columns without one)."""
    return {c: e["unit"] for c, e in entry["columns"].items() if e["unit"] != "key"}
