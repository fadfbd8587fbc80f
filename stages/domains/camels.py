"""The `camels` repository: CAMELS-US attributes as entities, forcing joined with streamflow by day.

Keys: `gauge_id` (8-character string) for entities; `gauge_id` + `date` for the time series. The
time series keeps every forcing day; discharge is null on days the gauge did not report.
"""

from __future__ import annotations

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
    pick = lambda frame: {c: units[c] for c in frame.columns if c in units and units[c] != "key"}  # noqa: E731
    return [
        Table("entities", entities, keys=(ENTITY_KEY,), units=pick(entities)),
        Table("timeseries", timeseries.reset_index(drop=True), keys=(ENTITY_KEY, "date"),
              units=pick(timeseries)),
    ]
