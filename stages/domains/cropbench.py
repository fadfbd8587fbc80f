"""The `cropbench` repository: CY-Bench regions with their static data, daily time series and yields.

Every table keys on `crop` next to `adm_id`, because CY-Bench soil, crop calendar, FPAR and NDVI
are crop-masked (NL11's soil differs between its maize and wheat files): a region's attributes and
time series are those of one crop. Tables:

- `entities` (crop, adm_id): country, US state, crop calendar (sos/eos day of year) and soil of each
  region seen in any CY-Bench table; nulls where a file is missing. `state` is the state whose FIPS
  code a US county's adm_id carries (`US-<state FIPS>-<county FIPS>`), null outside the US.
  CY-Bench ships no coordinates.
- `timeseries` (crop, adm_id, date): the union of the meteo, FPAR, NDVI and soil-moisture dates.
  `fpar_pct` / `ndvi` are as observed (null on other days and on NDVI fill); `fpar_interp_pct` /
  `ndvi_interp` interpolate linearly in time between observations at most `MAX_GAP_DAYS` apart
  (no extrapolation), so daily meteo rows carry a remote-sensing value.
- `yields` (crop, adm_id, harvest_year): yield, harvest area and production with the raw crop name.
- Khaki et al. tables (`county_yield`, `county_weather`, `county_soil`, `county_progress`,
  `counties`) pass through unchanged, keyed by (crop, loc_id), with the source's notes (e.g. a
  soybean lookup without coordinates): the Khaki lookup has county names but no FIPS codes, so
  they cannot be joined to `adm_id` here.

With the `imagery` source among the domain's sources, each Khaki county (the only regions with
coordinates: CY-Bench ships none) is given the statistics of the imagery mosaic over a 40 km
square around its centre, the size of a typical corn-belt county (the lookup has no areas):
`county_image_stats` (crop, loc_id, variable, date), `county_image_static` (crop, loc_id, variable)
and summary columns on `counties` such as `relief_mean_m` and `ndvi_max` (see `imagery_join`).
A county without coordinates (fill `0.0,0.0` in the lookup, or a lookup without `lat,long`
columns) has no square: it is left out of the join (no image rows, null summary columns), and a
note on `counties` and on both image tables says how many of each crop, and why.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa

from stages.domains.imagery_join import entity_imagery, square_footprints
from stages.tables import Table

ENTITY_KEY = "adm_id"
SOURCE = "crops"
IMAGERY = "imagery"
COUNTY_SIDE_M = 40_000.0  # ~1,600 km2, a typical corn-belt county
MAX_GAP_DAYS = 40  # FPAR is dekadal and NDVI ~8-daily: a longer gap is missing data, not bridged
REGION = ["crop", ENTITY_KEY]
STATIC = {"crop_calendar": ["sos_doy", "eos_doy"],
          "soil": ["awc_cm_m", "bulk_density_kg_dm3", "drainage_class"]}
SERIES = ("meteo", "fpar", "ndvi", "soil_moisture")
INTERPOLATED = {"fpar_pct": ("fpar_interp_pct", "%"), "ndvi": ("ndvi_interp", "1")}
KHAKI = ("county_yield", "county_weather", "county_soil", "county_progress", "counties")
PROVENANCE = ["country_code", "crop_name_raw"]
US_STATES = {  # FIPS state code -> name, lower case as in the Khaki lookup
    "01": "alabama", "04": "arizona", "05": "arkansas", "06": "california", "08": "colorado",
    "09": "connecticut", "10": "delaware", "12": "florida", "13": "georgia", "16": "idaho",
    "17": "illinois", "18": "indiana", "19": "iowa", "20": "kansas", "21": "kentucky",
    "22": "louisiana", "23": "maine", "24": "maryland", "25": "massachusetts", "26": "michigan",
    "27": "minnesota", "28": "mississippi", "29": "missouri", "30": "montana", "31": "nebraska",
    "32": "nevada", "33": "new hampshire", "34": "new jersey", "35": "new mexico", "36": "new york",
    "37": "north carolina", "38": "north dakota", "39": "ohio", "40": "oklahoma", "41": "oregon",
    "42": "pennsylvania", "44": "rhode island", "45": "south carolina", "46": "south dakota",
    "47": "tennessee", "48": "texas", "49": "utah", "50": "vermont", "51": "virginia",
    "53": "washington", "54": "west virginia", "55": "wisconsin", "56": "wyoming",
}


def align(inputs: dict[str, dict]) -> list[Table]:
    """Join the crops source tables into `entities`, `timeseries`, `yields`, the Khaki (and image) tables."""
    source = inputs[SOURCE]
    manifest = source.manifest["tables"]
    units = {column: entry["unit"] for table in manifest.values()
             for column, entry in table["columns"].items() if entry["unit"] != "key"}
    units |= dict(INTERPOLATED.values())
    entities = _entities(source)
    timeseries = _timeseries(source)
    yields = source["yield"].sort_values([*REGION, "harvest_year"], kind="stable", ignore_index=True)
    frames = {"entities": (entities, tuple(REGION)), "timeseries": (timeseries, (*REGION, "date")),
              "yields": (yields, (*REGION, "harvest_year"))}
    notes = {name: tuple(manifest[name].get("notes", ())) for name in KHAKI}
    for name in KHAKI:
        keys = tuple(manifest[name]["keys"])
        frames[name] = (source[name].sort_values(list(keys), kind="stable", ignore_index=True), keys)
    image_tables = []
    if IMAGERY in inputs:
        counties, keys = frames["counties"]
        located = (counties["lat_deg"].notna() & counties["lon_deg"].notna()).to_numpy()
        placed = counties[located].reset_index(drop=True)
        footprints = square_footprints(placed["lon_deg"], placed["lat_deg"], COUNTY_SIDE_M)
        joined = entity_imagery(inputs[IMAGERY], placed, list(keys), footprints, prefix="county_")
        counties = counties.merge(joined.summary, on=list(keys), how="left", validate="one_to_one")
        frames["counties"] = (counties, keys)
        units |= joined.summary_units
        left_out = unlocated_note(counties.loc[~located, "crop"], len(counties))
        notes["counties"] += left_out
        image_tables = [replace(table, notes=left_out) for table in joined.tables]
    tables = [Table(name, frame, keys, _units_of(frame, units, keys), notes.get(name, ()))
              for name, (frame, keys) in frames.items()]
    return tables + image_tables


def unlocated_note(crops: pd.Series, total: int) -> tuple[str, ...]:
    """The note on the counties the imagery join leaves out for having no coordinates (none: no note)."""
    if crops.empty:
        return ()
    per_crop = ", ".join(f"{crop} {count}" for crop, count in crops.value_counts().sort_index().items())
    return (f"{len(crops)} of {total} counties have no coordinates (lat_deg or lon_deg null) and are left out"
            f" of the imagery join (no county_image_stats or county_image_static rows, null image summary"
            f" columns): {per_crop}",)


def _entities(source: dict) -> pd.DataFrame:
    """One row per (crop, adm_id) of any CY-Bench table, with its calendar and soil."""
    names = ["yield", *SERIES, *STATIC]
    regions = pd.concat([source[name][[*REGION, "country_code"]] for name in names], ignore_index=True)
    entities = regions.drop_duplicates(REGION).sort_values(REGION, kind="stable", ignore_index=True)
    entities.insert(3, "state", us_state(entities[ENTITY_KEY]))
    for name, columns in STATIC.items():
        static = source[name][[*REGION, *columns]]
        entities = entities.merge(static, on=REGION, how="left", validate="one_to_one")
    return entities


def us_state(adm_id: pd.Series) -> pd.Series:
    """The US state of `US-ss-ccc` region ids (FIPS state code ss); null for any other id."""
    code = adm_id.astype(str).str.extract(r"^US-(\d{2})-\d{3}$", expand=False)
    return code.map(US_STATES).astype("string")


def _timeseries(source: dict) -> pd.DataFrame:
    """Outer join of the daily and remote-sensing series on (crop, adm_id, date), plus interpolations."""
    keys = [*REGION, "date"]
    joined = None
    for name in SERIES:
        frame = source[name].drop(columns=PROVENANCE)
        joined = frame if joined is None else joined.merge(frame, on=keys, how="outer", validate="one_to_one")
    joined = joined.sort_values(keys, kind="stable", ignore_index=True)
    days = pa.array(joined["date"].array).cast(pa.int32()).to_numpy(zero_copy_only=False).astype(np.float64)
    group = joined.groupby(REGION, sort=False, observed=True).ngroup().to_numpy()
    for column, (name, _) in INTERPOLATED.items():
        joined[name] = interpolate(group, days, joined[column].to_numpy(np.float64), MAX_GAP_DAYS)
    return joined


def interpolate(group: np.ndarray, days: np.ndarray, values: np.ndarray, max_gap: float) -> np.ndarray:
    """Linear interpolation of `values` (NaN = unobserved) in time within each group.

    Rows must be sorted by group then day. A row gets a value if it lies between two observations
    of its group at most `max_gap` days apart (or is itself an observation).
    """
    observed = ~np.isnan(values)
    frame = pd.DataFrame({"group": group, "day": np.where(observed, days, np.nan), "value": values})
    before = frame.groupby("group", sort=False)[["day", "value"]].ffill()
    after = frame.groupby("group", sort=False)[["day", "value"]].bfill()
    gap = after["day"].to_numpy() - before["day"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.where(gap > 0, (days - before["day"].to_numpy()) / gap, 0.0)
    result = before["value"].to_numpy() + weight * (after["value"].to_numpy() - before["value"].to_numpy())
    return np.where(gap <= max_gap, result, np.nan)


def _units_of(frame: pd.DataFrame, units: dict[str, str], keys: tuple[str, ...]) -> dict[str, str]:
    """The units of a frame's non-key columns, as the source manifest recorded them."""
    return {c: units[c] for c in frame.columns if c not in keys}
