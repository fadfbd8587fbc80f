"""Khaki et al. (2020) corn-belt files: the county-year wide csv and the `<Crop>_Loc_ID.csv` lookup.

Wide file: `loc_ID,year,yield`, then weekly weather `W_<i>_<week>` (variables i = 1..k, weeks 1..52),
SoilGrids soil `<var>_mean_<top>-<bottom>cm` (all six depths per variable) and planting progress
`P_1..P_n`, one row per (county, year). It is split into long tables an analyst can join:
yield per county-year (bu/acre as given, plus t/ha), weather per county-year-week (`w_<i>`: the
README does not name the six variables, so they keep their index), soil per county and depth
(checked to be the same in every year) and progress per county-year-week. Lookup: `State,County,
lat,long,ID_loc`, CRLF; coordinates `0.0,0.0` (real rows, e.g. "illinois,de kalb") are fill. The
published soybean lookup (`Soybeans_Loc_ID.csv`) is `State,County,ID_loc`, with no coordinates:
its counties get null `lat_deg` / `lon_deg`, and the reader returns a note saying so, which the
source keeps on its `counties` table (a column without its partner, `lat` without `long`, is an
error).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from stages.sources.crops.parse import Field, Fill, Rows, check_columns, fills_of, read_header, read_rows
from stages.tables import RawFormatError

CROPS = {"corn": "maize", "soybean": "soybean", "soybeans": "soybean"}  # file-name prefix -> crop
BUSHEL_T_HA = {"maize": 56 * 0.45359237 / 0.40468564224 / 1000,  # 56 lb/bu
               "soybean": 60 * 0.45359237 / 0.40468564224 / 1000}  # 60 lb/bu
SOIL_UNITS = {  # SoilGrids 250 m v2.0 mapped units (ISRIC): variable -> (unit, column suffix)
    "bdod": ("cg/cm3", "cg_cm3"), "cec": ("mmol(c)/kg", "mmolc_kg"), "cfvo": ("cm3/dm3", "cm3_dm3"),
    "clay": ("g/kg", "g_kg"), "nitrogen": ("cg/kg", "cg_kg"), "ocd": ("hg/m3", "hg_m3"),
    "ocs": ("t/ha", "t_ha"), "phh2o": ("pH*10", "ph10"), "sand": ("g/kg", "g_kg"),
    "silt": ("g/kg", "g_kg"), "soc": ("dg/kg", "dg_kg"),
}
DEPTHS = ((0, 5), (5, 15), (15, 30), (30, 60), (60, 100), (100, 200))
WEEKS = 52
WEATHER_UNIT = "unspecified (Daymet weekly variable, not named by the source)"
LOOKUP_COLUMNS = ("State", "County", "lat", "long", "ID_loc")
COORDINATES = ("lat", "long")
_WEATHER = re.compile(r"W_(\d+)_(\d+)")
_SOIL = re.compile(r"([a-z0-9]+)_mean_(\d+)-(\d+)cm")
_PROGRESS = re.compile(r"P_(\d+)")
_SAMPLE_FIELDS = {"loc_ID": Field("int", low=0, high=10**7), "year": Field("int", low=1900, high=2100),
                  "yield": Field("float", low=0, high=1000)}


def crop_of(path: Path) -> str:
    """The crop a Khaki file name starts with (`corn_samples.csv`, `Soybeans_Loc_ID.csv`)."""
    prefix = path.name.split("_", 1)[0].lower()
    if prefix not in CROPS:
        raise RawFormatError(path, None, f"file name must start with one of {', '.join(CROPS)}")
    return CROPS[prefix]


def read_khaki_samples(path: Path) -> dict[str, pd.DataFrame]:
    """Split a wide county-year file into `county_yield`, `_weather`, `_soil` and `_progress` frames."""
    crop, names = crop_of(path), read_header(path)
    groups = _column_groups(path, names)
    fields = dict(_SAMPLE_FIELDS) | {name: Field("float", low=-100, high=1e5) for name in groups["W"]}
    fields |= {name: Field("float", low=0, high=1e5) for name in groups["S"]}
    fields |= {name: Field("float", low=0, high=100) for name in groups["P"]}
    rows = read_rows(path, names, fields)
    rows.check_unique(["loc_ID", "year"])
    frame, n = rows.frame, len(rows.frame)
    loc = pd.array(frame["loc_ID"].astype(str).to_numpy(), dtype="string")
    ids = {"crop": pd.array([crop] * n, dtype="string"), "loc_id": loc,
           "year": frame["year"].to_numpy(np.int64)}
    bushels = frame["yield"].to_numpy(np.float64)
    tables = {"county_yield": pd.DataFrame(
        ids | {"yield_bu_ac": bushels, "yield_t_ha": bushels * BUSHEL_T_HA[crop]})}
    tables["county_weather"] = _by_week(ids, frame, "week", {
        f"w_{i}": [f"W_{i}_{week}" for week in range(1, WEEKS + 1)]
        for i in range(1, len(groups["W"]) // WEEKS + 1)})
    tables["county_progress"] = _by_week(ids, frame, "planting_week", {
        "progress_pct": [f"P_{i}" for i in range(1, len(groups["P"]) + 1)]})
    tables["county_soil"] = _soil(rows, ids, groups["S"])
    keys = {"county_yield": ["loc_id", "year"], "county_weather": ["loc_id", "year", "week"],
            "county_progress": ["loc_id", "year", "planting_week"], "county_soil": ["loc_id", "depth_top_cm"]}
    return {name: t.sort_values(keys[name], kind="stable", ignore_index=True) for name, t in tables.items()}


def read_khaki_locations(path: Path, allow_fills: bool = True) -> tuple[pd.DataFrame, list[Fill], str | None]:
    """Read a `<Crop>_Loc_ID.csv` lookup into `counties`; `0.0,0.0` coordinates become null.

    Returns the frame, its fill cells and a note when the lookup has no coordinate columns (then
    every `lat_deg` / `lon_deg` is null), else None.
    """
    crop, names = crop_of(path), read_header(path)
    fields = {"State": Field("text"), "County": Field("text"), "lat": Field("float", low=-90, high=90),
              "long": Field("float", low=-180, high=180), "ID_loc": Field("int", low=0, high=10**7)}
    located = any(name in names for name in COORDINATES)  # with one of them, the other is required
    required = set(LOOKUP_COLUMNS) if located else set(LOOKUP_COLUMNS) - set(COORDINATES)
    check_columns(path, names, fields, required)
    rows = read_rows(path, names, fields)
    rows.check_unique(["ID_loc"])
    n = len(rows.frame)
    lat, lon = ((rows.frame[c].to_numpy(np.float64) for c in COORDINATES) if located
                else (np.full(n, np.nan), np.full(n, np.nan)))
    note = None if located else (f"lat_deg and lon_deg are null for the {n} {crop} counties of {path.name}: its "
                                 f"header {','.join(names)} has no lat,long columns")
    fill = (lat == 0) & (lon == 0)
    if fill.any() and not allow_fills:
        raise rows.error(int(np.argmax(fill)), "fill coordinates 0.0,0.0 (no location)")
    fills = fills_of(rows, "lat,long", fill, np.where(fill, "0.0,0.0", ""))
    frame = pd.DataFrame({
        "crop": pd.array([crop] * len(lat), dtype="string"),
        "loc_id": pd.array(rows.frame["ID_loc"].astype(str).to_numpy(), dtype="string"),
        "state": rows.frame["State"], "county": rows.frame["County"],
        "lat_deg": np.where(fill, np.nan, lat), "lon_deg": np.where(fill, np.nan, lon)})
    return frame.sort_values("loc_id", kind="stable", ignore_index=True), fills, note


def soil_columns() -> dict[str, str]:
    """Output soil column -> unit."""
    return {f"{var}_{suffix}": unit for var, (unit, suffix) in SOIL_UNITS.items()}


def _column_groups(path: Path, names: list[str]) -> dict[str, list[str]]:
    """Check the header layout and sort its columns into weather (W), soil (S) and progress (P)."""
    if names[:3] != list(_SAMPLE_FIELDS):
        found = ",".join(names[:3])
        raise RawFormatError(path, 1, f"header must start with loc_ID,year,yield, found {found!r}")
    groups: dict[str, list[str]] = {"W": [], "S": [], "P": []}
    for name in names[3:]:
        soil = _SOIL.fullmatch(name)
        if _WEATHER.fullmatch(name) or _PROGRESS.fullmatch(name):
            groups[name[0]].append(name)
        elif soil and soil[1] in SOIL_UNITS and (int(soil[2]), int(soil[3])) in DEPTHS:
            groups["S"].append(name)
        else:
            raise RawFormatError(path, 1, f"unknown column {name!r} in the header")
    n_weather = max((int(_WEATHER.fullmatch(n)[1]) for n in groups["W"]), default=0)
    expected = [f"W_{i}_{w}" for i in range(1, n_weather + 1) for w in range(1, WEEKS + 1)]
    expected += [f"P_{i}" for i in range(1, len(groups["P"]) + 1)]
    variables = sorted({_SOIL.fullmatch(n)[1] for n in groups["S"]})
    expected += [f"{v}_mean_{top}-{bottom}cm" for v in variables for top, bottom in DEPTHS]
    extra = [name for name in groups["W"] + groups["P"] if name not in expected]
    if extra:
        raise RawFormatError(path, 1, f"unknown column {extra[0]!r} in the header")
    missing = [name for name in expected if name not in names]
    if missing or not groups["W"]:
        raise RawFormatError(path, 1, f"missing column {missing[0] if missing else 'W_1_1'} in the header")
    return groups


def _by_week(ids: dict, frame: pd.DataFrame, key: str, columns: dict[str, list[str]]) -> pd.DataFrame:
    """Long table: one row per (county, year, week) with one column per variable."""
    width = len(next(iter(columns.values()))) if columns else 0
    repeated = {name: np.repeat(np.asarray(values), width) for name, values in ids.items()}
    for name in ("crop", "loc_id"):
        repeated[name] = pd.array(repeated[name], dtype="string")
    weeks = np.tile(np.arange(1, width + 1, dtype=np.int64), len(frame))
    values = {name: frame[raw].to_numpy(np.float64).reshape(-1) for name, raw in columns.items()}
    return pd.DataFrame(repeated | {key: weeks} | values)


def _soil(rows: Rows, ids: dict, present: list[str]) -> pd.DataFrame:
    """Soil per county and depth; a county whose soil differs between years is an error."""
    frame = rows.frame
    first = frame.groupby("loc_ID", sort=False)[present].transform("first")
    differs = (frame[present] != first).to_numpy()
    if differs.any():
        row, column = np.argwhere(differs)[0]
        loc = frame["loc_ID"].iloc[row]
        first_row = int(np.argmax((frame["loc_ID"] == loc).to_numpy()))
        line = rows.error(first_row, "").line
        raise rows.error(int(row), f"soil value {present[column]} of loc_ID {loc} differs from its value "
                                   f"in another year (line {line})")
    once = ~frame.duplicated("loc_ID").to_numpy()
    variables = sorted({_SOIL.fullmatch(n)[1] for n in present})
    out = {"crop": np.repeat(np.asarray(ids["crop"])[once], len(DEPTHS)),
           "loc_id": np.repeat(np.asarray(ids["loc_id"])[once], len(DEPTHS)),
           "depth_top_cm": np.tile([top for top, _ in DEPTHS], int(once.sum())).astype(np.int64),
           "depth_bottom_cm": np.tile([bottom for _, bottom in DEPTHS], int(once.sum())).astype(np.int64)}
    for var in variables:
        names = [f"{var}_mean_{top}-{bottom}cm" for top, bottom in DEPTHS]
        out[f"{var}_{SOIL_UNITS[var][1]}"] = frame.loc[once, names].to_numpy(np.float64).reshape(-1)
    table = pd.DataFrame(out)
    for name in ("crop", "loc_id"):
        table[name] = table[name].astype("string")
    return table
