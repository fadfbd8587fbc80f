"""The `camels` repository: CAMELS-US attributes as entities, forcing joined with streamflow by day.

Keys: `gauge_id` (8-character string) for entities; `gauge_id` + `date` for the time series. The
time series keeps every forcing day; discharge is null on days the gauge did not report.
"""

from __future__ import annotations

import pandas as pd

from stages.tables import Table

ENTITY_KEY = "gauge_id"
STREAMFLOW_COLUMNS = ["qobs_mm_d", "qobs_flag"]


def align(inputs: dict[str, dict]) -> list[Table]:
    """Join camels_us tables into the aligned `entities` and `timeseries` tables."""
    source = inputs["camels_us"]
    units = {}
    for name in ("attributes", "forcing", "streamflow"):
        for column, entry in source["_manifest"]["tables"][name]["columns"].items():
            units[column] = entry["unit"]
    forcing, streamflow = source["forcing"], source["streamflow"]
    basins = sorted(forcing[ENTITY_KEY].unique())
    entities = source["attributes"]
    entities = entities[entities[ENTITY_KEY].isin(basins)].reset_index(drop=True)
    timeseries = forcing.merge(
        streamflow[[ENTITY_KEY, "date", *STREAMFLOW_COLUMNS]],
        on=[ENTITY_KEY, "date"],
        how="left",
        validate="one_to_one",
    ).sort_values([ENTITY_KEY, "date"], kind="stable")
    return [
        Table("entities", entities, keys=(ENTITY_KEY,), units=_units_of(entities, units)),
        Table("timeseries", timeseries.reset_index(drop=True), keys=(ENTITY_KEY, "date"),
              units=_units_of(timeseries, units)),
    ]


def _units_of(frame: pd.DataFrame, units: dict[str, str]) -> dict[str, str]:
    """The units of a frame's non-key columns, as the source manifest recorded them."""
    return {c: units[c] for c in frame.columns if units.get(c, "key") != "key"}
