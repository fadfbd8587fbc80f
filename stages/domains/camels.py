"""The `camels` repository: CAMELS-US basins with forcing, streamflow and (optionally) imagery.

Keys: `gauge_id` (8-character string) for entities; `gauge_id` + `date` for the time series. The
time series is camels_us's `daily` table as ingested (copied, not re-encoded): every day of the
forcing or the streamflow record, discharge null on days the gauge did not report.

With the `imagery` source among the domain's sources, each basin is given the statistics of the
imagery mosaic over a square of its area (`area_gages2_km2`) centred on the gauge: CAMELS lists
gauge locations, not basin outlines, so the square stands in for the catchment around its outlet.
That adds `image_stats` (gauge_id, variable, date), `image_static` (gauge_id, variable) and summary
columns on `entities` such as `relief_mean_m` and `ndvi_max` (see `imagery_join`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stages.domains.imagery_join import entity_imagery, square_footprints
from stages.tables import Table

ENTITY_KEY = "gauge_id"
SOURCE = "camels_us"
IMAGERY = "imagery"


def align(inputs: dict[str, dict]) -> list[Table]:
    """Join camels_us tables (and imagery, when given) into the aligned repository tables."""
    source = inputs[SOURCE]
    units = {}
    for name in ("attributes", "daily"):
        for column, entry in source.manifest["tables"][name]["columns"].items():
            units[column] = entry["unit"]
    basins = sorted(source.columns("daily", [ENTITY_KEY])[ENTITY_KEY].unique())
    entities = source["attributes"]
    entities = entities[entities[ENTITY_KEY].isin(basins)].reset_index(drop=True)
    image_tables: list[Table] = []
    if IMAGERY in inputs:
        side_m = np.sqrt(entities["area_gages2_km2"].astype("float64")) * 1000.0
        joined = entity_imagery(inputs[IMAGERY], entities, [ENTITY_KEY],
                                square_footprints(entities["gauge_lon_deg"], entities["gauge_lat_deg"], side_m))
        entities = entities.merge(joined.summary, on=ENTITY_KEY, how="left", validate="one_to_one")
        units |= joined.summary_units
        image_tables = joined.tables
    return [
        Table("entities", entities, keys=(ENTITY_KEY,), units=_units_of(entities, units)),
        source.copy("daily", "timeseries"),  # forcing and discharge by day, as ingested
        *image_tables,
    ]


def _units_of(frame: pd.DataFrame, units: dict[str, str]) -> dict[str, str]:
    """The units of a frame's non-key columns, as the source manifest recorded them."""
    return {c: units[c] for c in frame.columns if units.get(c, "key") != "key"}
