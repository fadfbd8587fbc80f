"""The `control` repository: synthetic series with known structure (the benchmark's control set).

Tables (key `series_id`):
- `entities`: one row per series that has days: `family` (mixture, noise, ar, linear), `region`,
  the attributes `a1`..`a3`, and two hidden labels that tasks withhold from agents: `component`
  (the Gaussian-mixture component, mixture series only) and `driver` (the dominant driver column
  of a linear series).
- `timeseries` (series_id, date): the daily target `y` and the columns `x1`..`x5`, as ingested.

The generator and the families are described in `stages.synthesize.control`; the raw format in
`stages.sources.control`.
"""

from __future__ import annotations

from stages.tables import Table

ENTITY_KEY = "series_id"
SOURCE = "control"


def align(inputs: dict[str, dict]) -> list[Table]:
    """The source's `series` as `entities` (series without days left out) and `daily` as `timeseries`."""
    source = inputs[SOURCE]
    units = {column: entry["unit"] for name in ("series", "daily")
             for column, entry in source.manifest["tables"][name]["columns"].items() if entry["unit"] != "key"}
    timeseries = source["daily"]
    entities = source["series"]
    entities = entities[entities[ENTITY_KEY].isin(set(timeseries[ENTITY_KEY]))].reset_index(drop=True)
    return [
        Table("entities", entities, (ENTITY_KEY,), {c: units[c] for c in entities.columns if c != ENTITY_KEY}),
        Table("timeseries", timeseries, (ENTITY_KEY, "date"),
              {c: units[c] for c in timeseries.columns if c not in (ENTITY_KEY, "date")}),
    ]
