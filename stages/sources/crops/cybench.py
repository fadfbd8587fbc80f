"""CY-Bench `<crop>/<CC>/<source>_<crop>_<CC>.csv` files: columns, units, ranges and checks per source.

Each file becomes a frame with the keys `crop` (the path's crop, case as given), `adm_id` and
`date` (pyarrow date32) or `harvest_year`, then `country_code` (the path's, or the file's column
where it has one and agrees), `crop_name_raw` (the file's spelling, e.g. `winter_wheat` under
`wheat/`) and the value columns renamed with their units. Values outside a physical range are
rejected as unexpected sentinels; NDVI is rescaled from 50-250 to NDVI units and values below 50
(`0.0` in the real files) are fill: null, reported as `Fill` records (or an error, per caller).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from stages.sources.crops.parse import (
    DATE_DTYPE,
    Field,
    Fill,
    Rows,
    check_columns,
    fills_of,
    read_header,
    read_rows,
    string_array,
    to_dates,
)
from stages.tables import RawFormatError

NDVI_FILL_BELOW = 50.0  # MOD09CMG-derived NDVI is stored as 50 + 200 * NDVI; lower values are invalid pixels
CROP_ALIASES = {"maize": {"corn", "grain_maize"}, "wheat": {"winter_wheat", "spring_wheat"}}


@dataclass(frozen=True)
class Value:
    """A value column: name in the file, output name, unit and the raw field's checks."""

    raw: str
    name: str
    unit: str
    field: Field


@dataclass(frozen=True)
class Source:
    """One CY-Bench file kind: its time key (if any), value columns and which values must be present."""

    time: str | None
    values: tuple[Value, ...]
    required: frozenset[str]


def _values(spec: str, unit: str, low: float, high: float) -> tuple[Value, ...]:
    pairs = [item.split(":") for item in spec.split()]
    return tuple(Value(raw, name, unit, Field("float", True, low, high)) for raw, name in pairs)


SOURCES: dict[str, Source] = {
    "yield": Source("harvest_year", (
        *_values("yield:yield_t_ha", "t/ha", 0, 100),
        *_values("harvest_area:harvest_area_ha", "ha", 0, 1e8),
        *_values("production:production_t", "t", 0, 1e10),
    ), frozenset({"yield"})),
    "meteo": Source("date", (
        *_values("tmin:tmin_c tmax:tmax_c tavg:tavg_c", "degC", -90, 65),
        *_values("prec:prec_mm_d", "mm/d", 0, 1000),
        *_values("rad:rad_j_m2_d", "J/m2/d", 0, 5e7),
        *_values("et0:et0_mm_d", "mm/d", 0, 30),
        *_values("vpd:vpd_hpa", "hPa", 0, 150),
        *_values("cwb:cwb_mm_d", "mm/d", -50, 1000),
    ), frozenset()),
    "fpar": Source("date", _values("fpar:fpar_pct", "%", 0, 100), frozenset({"fpar"})),
    "ndvi": Source("date", _values("ndvi:ndvi", "1", 0, 250), frozenset({"ndvi"})),
    "soil": Source(None, (
        *_values("awc:awc_cm_m", "cm/m", 0, 100),
        *_values("bulk_density:bulk_density_kg_dm3", "kg/dm3", 0.1, 2.7),
        *_values("drainage_class:drainage_class", "1", 1, 7),
    ), frozenset()),
    "soil_moisture": Source("date", _values("ssm:ssm_kg_m2 rsm:rsm_kg_m2", "kg/m2", 0, 5000), frozenset()),
    "crop_calendar": Source(None, _values("sos:sos_doy eos:eos_doy", "day of year", 0, 366),
                            frozenset({"sos", "eos"})),
}
TEXT_UNITS = {"country_code": "1", "crop_name_raw": "1"}
_TIME_FIELDS = {"date": Field("date"), "harvest_year": Field("int", low=1900, high=2100)}


def units_of(source: str) -> dict[str, str]:
    """Units of the non-key columns of a source's table."""
    return TEXT_UNITS | {value.name: value.unit for value in SOURCES[source].values}


def keys_of(source: str) -> tuple[str, ...]:
    """Key columns of a source's table."""
    time = SOURCES[source].time
    return ("crop", "adm_id") if time is None else ("crop", "adm_id", time)


def empty_frame(source: str) -> pd.DataFrame:
    """A zero-row frame with the table's columns and dtypes."""
    time = SOURCES[source].time
    columns = {"crop": "string", "adm_id": "string"}
    columns |= {} if time is None else {time: "int64" if time == "harvest_year" else "date"}
    columns |= {"country_code": "string", "crop_name_raw": "string"}
    columns |= {v.name: "Int64" if v.name == "drainage_class" else "float64" for v in SOURCES[source].values}
    return pd.DataFrame({name: pd.array([], dtype=DATE_DTYPE if kind == "date" else kind)
                         for name, kind in columns.items()})


def read_cybench_file(path: Path, source: str, crop: str, country: str,
                      allow_fills: bool = True) -> tuple[pd.DataFrame, list[Fill]]:
    """Read one CY-Bench file into its table's frame (sorted by key) and the fill values it held."""
    spec = SOURCES[source]
    names = read_header(path)
    fields = {"crop_name": Field("text"), "adm_id": Field("text"), "country_code": Field("text")}
    fields |= {} if spec.time is None else {spec.time: _TIME_FIELDS[spec.time]}
    values = {v.raw: v for v in spec.values}
    fields |= {raw: Field("float", allow_fills, v.field.low, v.field.high) for raw, v in values.items()}
    required = {"crop_name", "adm_id"} | ({spec.time} if spec.time else set()) | spec.required
    check_columns(path, names, fields, required)
    if not any(name in values for name in names):
        raise RawFormatError(path, 1, f"no value column in the header (expected some of {', '.join(values)})")
    rows = read_rows(path, names, fields)
    _check_crop(rows, crop)
    _check_country(rows, country)
    columns, fills = _value_columns(rows, spec, allow_fills)
    order, dates = _key_order(rows, spec.time)
    n = len(order)
    out = {"crop": _constant(crop, n), "adm_id": string_array(rows.table["adm_id"].take(order))}
    if spec.time == "date":
        out["date"] = pd.arrays.ArrowExtensionArray(dates.take(order))
    elif spec.time:
        out[spec.time] = rows.frame[spec.time].to_numpy(np.int64)[order]
    raw_names = rows.table["crop_name"]
    single = pc.count_distinct(raw_names).as_py() == 1
    out |= {"country_code": _constant(country, n),
            "crop_name_raw": _constant(raw_names[0].as_py(), n) if single
            else string_array(raw_names.take(order))}
    out |= {name: array[order] for name, array in columns.items()}
    result = pd.DataFrame(out)
    if "drainage_class" in result:
        result["drainage_class"] = result["drainage_class"].astype("Int64")
    return result, fills


def _key_order(rows: Rows, time: str | None) -> tuple[np.ndarray, pa.ChunkedArray | None]:
    """Row order by (adm_id, time) and the parsed dates; raises on a duplicated key."""
    codes = pd.factorize(rows.frame["adm_id"], sort=True)[0].astype(np.int64)
    dates, stamp = None, np.zeros(len(codes), dtype=np.int64)
    if time == "date":
        dates = to_dates(rows.table["date"])
        stamp = dates.cast(pa.int32()).to_numpy().astype(np.int64)
    elif time:
        stamp = rows.frame[time].to_numpy(np.int64)
    key = (codes << 32) + (stamp - stamp.min())
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    if (ordered[1:] == ordered[:-1]).any():
        rows.check_unique(["adm_id"] + ([time] if time else []))
    return order, dates


def _constant(value: str, n: int) -> pd.arrays.ArrowStringArray:
    return string_array(pa.repeat(pa.scalar(value, pa.string()), n))


def _value_columns(rows: Rows, spec: Source, allow_fills: bool) -> tuple[dict[str, np.ndarray], list[Fill]]:
    """The value columns in output units (absent ones all null) and the fill cells found."""
    columns, fills = {}, []
    for value in spec.values:
        if value.raw not in rows.frame:
            columns[value.name] = np.full(len(rows.frame), np.nan)
            continue
        raw = rows.frame[value.raw].to_numpy(dtype="float64", na_value=np.nan)
        fills += fills_of(rows, value.raw, rows.empty[value.raw])
        if value.raw == "ndvi":
            fill = ~rows.empty["ndvi"] & (raw < NDVI_FILL_BELOW)
            if fill.any() and not allow_fills:
                row = int(np.argmax(fill))
                raise rows.error(row, f"fill value {raw[row]:g} in column ndvi (values below "
                                      f"{NDVI_FILL_BELOW:g} mark invalid pixels)")
            fills += fills_of(rows, "ndvi", fill, raw)
            raw = np.where(fill, np.nan, (raw - 50.0) / 200.0)
        columns[value.name] = raw
    if "drainage_class" in columns:
        classes = columns["drainage_class"]
        fractional = ~np.isnan(classes) & (classes != np.round(classes))
        if fractional.any():
            row = int(np.argmax(fractional))
            raise rows.error(row, f"value {classes[row]:g} in column drainage_class is not a whole class")
    return columns, fills


def _check_crop(rows: Rows, crop: str) -> None:
    """A file's crop_name must name the path's crop (or a spelling of it such as `winter_wheat`)."""
    names = rows.frame["crop_name"]
    for name in names.unique():
        if not _same_crop(str(name), crop):
            row = int(np.argmax((names == name).to_numpy()))
            raise rows.error(row, f"crop_name {name!r} contradicts the crop {crop!r} of the path")


def _same_crop(name: str, crop: str) -> bool:
    words = set(re.split(r"[_\s-]+", name.lower()))
    lower = crop.lower()
    return name.lower() == lower or lower in words or name.lower() in CROP_ALIASES.get(lower, set())


def _check_country(rows: Rows, country: str) -> None:
    if "country_code" not in rows.frame:
        return
    codes = rows.frame["country_code"].str.upper()
    wrong = (codes != country.upper()).to_numpy(dtype=bool, na_value=False)
    if wrong.any():
        row = int(np.argmax(wrong))
        found = rows.frame["country_code"].iloc[row]
        raise rows.error(row, f"country_code {found!r} contradicts the country {country!r} of the path")
