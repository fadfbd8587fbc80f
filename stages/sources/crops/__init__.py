"""Crop yield source adapter: the CY-Bench layout and the Khaki et al. (2020) county-year layout.

Raw layout under ``raw_dir`` (any subset; crop and country come from the path, case as given)::

    <crop>/<CC>/<source>_<crop>_<CC>.csv   CY-Bench, source in yield, meteo, fpar, ndvi, soil,
                                           soil_moisture, crop_calendar
    khaki/<crop>_samples.csv               Khaki wide county-year file, <crop> corn or soybean(s)
    khaki/<Crop>_Loc_ID.csv                optional lookup loc_ID -> State, County[, lat, long]

CY-Bench files are comma-separated with one header row, dates `YYYYMMDD`; units: yield t/ha,
harvest area ha, production t; meteo tmin/tmax/tavg degC, prec/et0/cwb mm/d, rad J/m2/d, vpd hPa;
FPAR percent; NDVI stored as 50 + 200 * NDVI (values below 50 are fill: null + a `fill_values`
row); soil awc cm/m, bulk density kg/dm3, FAO drainage class; crop calendar sos/eos day of year;
soil moisture kg/m2. `crop_name` spellings vary (`winter_wheat` under `wheat/`): `crop` is the
path's crop and `crop_name_raw` keeps the file's. Khaki yields are bu/acre (also given in t/ha);
its tables are keyed by `loc_id`, which cannot be joined to `adm_id` without a county-name-to-FIPS
crosswalk (the lookup has names, no FIPS). A lookup without `lat,long` columns (the published
soybean one) gives null coordinates, and the `counties` table's manifest entry carries a note
naming the file and its header (`Table.notes`). Rows may come in any order (the real NDVI files are
unsorted) and are sorted by key. Non-csv files (README, PROVENANCE.md, the generator's
`_truth.json`) are ignored; a csv that fits neither layout is an error. `fill_values` paths are
relative to ``raw_dir``.

CY-Bench: Paudel et al. (2024), doi:10.5281/zenodo.11502142. Khaki, Wang and Archontoulis (2020),
doi:10.3389/fpls.2019.01750.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from stages.sources.crops.cybench import SOURCES, empty_frame, keys_of, read_cybench_file, units_of
from stages.sources.crops.khaki import WEATHER_UNIT, read_khaki_locations, read_khaki_samples, soil_columns
from stages.sources.crops.parse import Fill
from stages.tables import RawFormatError, Table, quarantine_table

CITATION = (
    "Paudel, D. et al. (2024): CY-Bench: A comprehensive benchmark dataset for subnational crop yield"
    " forecasting, AgML, version 1.0, doi:10.5281/zenodo.11502142; Khaki, S., Wang, L. and"
    " Archontoulis, S. V. (2020): A CNN-RNN framework for crop yield prediction, Frontiers in Plant"
    " Science 10, 1750, doi:10.3389/fpls.2019.01750"
)
LICENSE = (
    "CY-Bench: per upstream source (yield, FPAR, NDVI CC-BY-4.0; meteo Copernicus licence, et0 CC"
    " BY-NC-SA 3.0 IGO; soil CC-BY-3.0; crop calendar none stated); Khaki et al. data: academic,"
    " non-commercial use on request (no licence file)"
)
KHAKI_KEYS = {
    "county_yield": ("crop", "loc_id", "year"), "county_weather": ("crop", "loc_id", "year", "week"),
    "county_soil": ("crop", "loc_id", "depth_top_cm"),
    "county_progress": ("crop", "loc_id", "year", "planting_week"), "counties": ("crop", "loc_id"),
}
KHAKI_UNITS = {"yield_bu_ac": "bu/acre", "yield_t_ha": "t/ha", "depth_bottom_cm": "cm",
               "progress_pct": "%", "state": "1", "county": "1", "lat_deg": "deg", "lon_deg": "deg"}
FILL_KEYS = ("file", "column", "value")


class Params(BaseModel):
    """Parameters of `ingest@crops`."""

    model_config = ConfigDict(extra="forbid")
    # fill cells (NDVI < 50, empty value cells, Khaki 0.0,0.0 coordinates): "report" makes them null
    # and lists them in the `fill_values` table; "error" treats them as bad input (see on_error)
    fill_values: Literal["report", "error"] = "report"
    on_error: Literal["raise", "quarantine"] = "raise"


def read(raw_dir: Path, params: Params) -> Iterator[Table]:
    """Yield the CY-Bench tables, the Khaki tables, `fill_values` and `quarantine`.

    With `on_error="quarantine"` a bad file is left out (its error goes to the quarantine table)
    and every other file is kept. `fill_values` lists, per file, column and raw value, the cells
    that became null (with `fill_values="report"`). A Khaki lookup without coordinate columns is
    not fill: its counties' null coordinates are said in a note on the `counties` table.
    """
    errors: list[RawFormatError] = []
    fills: list[Fill] = []
    frames: dict[str, list[pd.DataFrame]] = {name: [] for name in [*SOURCES, *KHAKI_KEYS]}
    notes: dict[str, list[str]] = {name: [] for name in KHAKI_KEYS}
    owners: dict[tuple, Path] = {}
    allow = params.fill_values == "report"
    for path, kind, parts in _discover(raw_dir, params, errors):
        try:
            tables, found, said = _READERS[kind](path, parts, allow)
            _claim(path, tables, owners)
        except RawFormatError as error:
            if params.on_error == "raise":
                raise
            errors.append(error)
            continue
        fills += found
        for name, note in said:
            notes[name].append(note)
        for name, frame in tables.items():
            frames[name].append(frame)
    for source in SOURCES:
        frame = _stack(frames[source], empty_frame(source), keys_of(source))
        yield Table(source, frame, keys_of(source), units_of(source))
    for name, keys in KHAKI_KEYS.items():
        frame = _stack(frames[name], _empty_khaki(name), keys)
        units = KHAKI_UNITS | soil_columns() | {c: WEATHER_UNIT for c in frame if c.startswith("w_")}
        yield Table(name, frame, keys, {c: units[c] for c in frame if c not in keys}, tuple(notes[name]))
    yield _fill_table(raw_dir, fills)
    yield quarantine_table(errors)


def read_cybench(raw_dir: Path, crop: str, country: str, source: str) -> pd.DataFrame:
    """Read one CY-Bench file of the layout (fill values become null)."""
    path = raw_dir / crop / country / f"{source}_{crop}_{country}.csv"
    return read_cybench_file(path, source, crop, country)[0]


Read = tuple[dict[str, pd.DataFrame], list[Fill], list[tuple[str, str]]]  # tables, fills, (table, note)


def _cybench(path: Path, parts: tuple, allow: bool) -> Read:
    source, crop, country = parts
    frame, fills = read_cybench_file(path, source, crop, country, allow)
    return {source: frame}, fills, []


def _lookup(path: Path, parts: tuple, allow: bool) -> Read:
    frame, fills, note = read_khaki_locations(path, allow)
    return {"counties": frame}, fills, [("counties", note)] if note else []


def _samples(path: Path, parts: tuple, allow: bool) -> Read:
    return read_khaki_samples(path), [], []


_READERS = {"cybench": _cybench, "lookup": _lookup, "khaki": _samples}  # file kind -> reader


def _discover(raw_dir: Path, params: Params, errors: list[RawFormatError]) -> list[tuple[Path, str, tuple]]:
    """(path, kind, parts) of every csv of the two layouts, sorted by path; other csv files are errors."""
    found, problems = [], []
    for path in sorted(raw_dir.rglob("*.csv")):
        parts = path.relative_to(raw_dir).parts
        if any(part.startswith(".") for part in parts):
            continue
        if len(parts) == 2 and parts[0] == "khaki":
            found.append((path, "lookup" if path.name.lower().endswith("_loc_id.csv") else "khaki", ()))
            continue
        sources = [s for s in SOURCES if len(parts) == 3 and parts[2] == f"{s}_{parts[0]}_{parts[1]}.csv"]
        if sources:
            found.append((path, "cybench", (sources[0], parts[0], parts[1])))
        else:
            problems.append(RawFormatError(path, None, "csv file fits neither <crop>/<CC>/<source>_<crop>_"
                                                       "<CC>.csv (CY-Bench) nor khaki/<crop>_*.csv"))
    if not found and not problems:
        problems.append(RawFormatError(raw_dir, None, "no CY-Bench or Khaki csv files found"))
    if problems and params.on_error == "raise":
        raise problems[0]
    errors.extend(problems)
    return found


def _claim(path: Path, tables: dict[str, pd.DataFrame], owners: dict[tuple, Path]) -> None:
    """Reject a file whose entities (crop + adm_id / loc_id) another file of the same table holds."""
    claims = []
    for name, frame in tables.items():
        entity = "adm_id" if "adm_id" in frame else "loc_id"
        crop = frame["crop"].iloc[0] if len(frame) else ""  # one crop per file
        for ident in frame[entity].unique():
            other = owners.get((name, crop, ident))
            if other is not None:
                raise RawFormatError(path, None, f"{entity} {ident} of crop {crop} is also in {other}")
            claims.append((name, crop, ident))
    owners.update(dict.fromkeys(claims, path))


def _stack(frames: list[pd.DataFrame], empty: pd.DataFrame, keys: tuple[str, ...]) -> pd.DataFrame:
    if len(frames) < 2:  # a file's frame is already sorted by its keys
        return frames[0] if frames else empty
    return pd.concat(frames, ignore_index=True).sort_values(list(keys), kind="stable", ignore_index=True)


def _empty_khaki(name: str) -> pd.DataFrame:
    text, ints = ("crop", "loc_id", "state", "county"), ("year", "week", "planting_week", "depth_top_cm",
                                                        "depth_bottom_cm")
    columns = {
        "county_yield": ["yield_bu_ac", "yield_t_ha"], "county_weather": [f"w_{i}" for i in range(1, 7)],
        "county_soil": ["depth_bottom_cm", *soil_columns()], "county_progress": ["progress_pct"],
        "counties": ["state", "county", "lat_deg", "lon_deg"],
    }[name]
    names = [*KHAKI_KEYS[name], *columns]
    return pd.DataFrame({c: pd.array([], dtype="string" if c in text else "int64" if c in ints else "float64")
                         for c in names})


def _fill_table(raw_dir: Path, fills: list[Fill]) -> Table:
    rows = sorted((f.path.relative_to(raw_dir).as_posix(), f.column, f.value, f.rows, f.first_line)
                  for f in fills)
    frame = pd.DataFrame(rows, columns=[*FILL_KEYS, "rows", "first_line"]).astype(
        {"file": "string", "column": "string", "value": "string", "rows": "int64", "first_line": "int64"})
    return Table("fill_values", frame, FILL_KEYS, {"rows": "1", "first_line": "1"})
