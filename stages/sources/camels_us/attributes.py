"""CAMELS-US catchment attributes: the `;`-separated `camels_<group>.txt` files, renamed with units.

``gauge_id`` is an 8-character string, ``NA`` marks a missing value, text attributes are stripped.
Names and units: Addor et al. (2017), doi:10.5194/hess-21-5293-2017, Tables 1-4; each column gets
its unit as a suffix (`area_gages2_km2`, `p_mean_mm_d`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stages.sources.camels_us.files import GAUGE_ID, delimiter_hint
from stages.tables import RawFormatError, finite_float

_BY_UNIT = {  # Addor et al. (2017), Tables 1-4; the column gets the unit's suffix
    "deg": "gauge_lat gauge_lon",
    "m": "elev_mean soil_depth_pelletier soil_depth_statsgo max_water_content root_depth_50"
    " root_depth_99",
    "m/km": "slope_mean",
    "km2": "area_gages2 area_geospa_fabric",
    "mm/d": "p_mean pet_mean q_mean q5 q95",
    "d/yr": "high_prec_freq low_prec_freq high_q_freq low_q_freq",
    "d": "high_prec_dur low_prec_dur high_q_dur low_q_dur hfd_mean",
    "cm/h": "soil_conductivity",
    "%": "sand_frac silt_frac clay_frac water_frac organic_frac other_frac",
    "log10(m2)": "geol_permeability",
    "1": "huc_02 gauge_name p_seasonality frac_snow aridity high_prec_timing low_prec_timing"
    " runoff_ratio slope_fdc baseflow_index stream_elas zero_q_freq soil_porosity geol_1st_class"
    " glim_1st_class_frac geol_2nd_class glim_2nd_class_frac carbonate_rocks_frac frac_forest"
    " lai_max lai_diff gvf_max gvf_diff dom_land_cover_frac dom_land_cover",
}
_SUFFIX = {"1": "", "%": "_pct", "log10(m2)": "_log10_m2"}
ATTRIBUTES: dict[str, tuple[str, str]] = {
    name: (name + _SUFFIX.get(unit, "_" + unit.replace("/", "_")), unit)
    for unit, names in _BY_UNIT.items()
    for name in names.split()
} | {"geol_porostiy": ("geol_porosity", "1")}  # (sic) in the files; zero_q_freq is a fraction
STRING_ATTRIBUTES = frozenset(
    "huc_02 gauge_name high_prec_timing low_prec_timing geol_1st_class geol_2nd_class"
    " dom_land_cover".split()
)
ATTRIBUTE_GROUPS = ("name", "topo", "clim", "hydro", "soil", "geol", "vege")
REQUIRED_GROUPS = ("name", "topo")


def read_attributes(raw_dir: Path) -> pd.DataFrame:
    """Read and outer-join the attribute files on `gauge_id`, renamed per `ATTRIBUTES`."""
    merged = pd.DataFrame({"gauge_id": pd.array([], dtype="string")})
    for group in ATTRIBUTE_GROUPS:
        path = raw_dir / "camels_attributes_v2.0" / f"camels_{group}.txt"
        if not path.is_file():
            if group in REQUIRED_GROUPS:
                raise RawFormatError(path, None, "required attribute file is missing")
            continue
        frame = read_attribute_file(path)
        clash = sorted(set(frame.columns[1:]) & set(merged.columns))
        if clash:
            raise RawFormatError(path, 1, f"column {clash[0]!r} also appears in another file")
        merged = merged.merge(frame, on="gauge_id", how="outer")
    return merged.sort_values("gauge_id", ignore_index=True)


def attribute_units(columns) -> dict[str, str]:
    """The unit of every renamed attribute column among `columns`."""
    return {new: unit for new, unit in ATTRIBUTES.values() if new in columns}


def read_attribute_file(path: Path) -> pd.DataFrame:
    """One `camels_<group>.txt` file as a frame with renamed columns."""
    lines, texts = path.read_text(encoding="utf-8", errors="replace").splitlines(), STRING_ATTRIBUTES | {"gauge_id"}
    header = [name.strip() for name in lines[0].split(";")] if lines else [""]
    if header[0] != "gauge_id":
        problem = f"first column must be gauge_id, found {header[0]!r}{delimiter_hint(header[0])}"
        raise RawFormatError(path, 1, "file is empty" if not lines else problem)
    for index, name in enumerate(header[1:], 1):
        if name not in ATTRIBUTES or name in header[:index]:
            problem = "unknown" if name not in ATTRIBUTES else "duplicated"
            raise RawFormatError(path, 1, f"{problem} column {name!r}")
    columns: list[list[str | float | None]] = [[] for _ in header]
    first_seen: dict[str, int] = {}
    for number, line in enumerate(lines[1:], 2):
        fields = [field.strip() for field in line.split(";")]
        if not line.strip():
            continue
        if len(fields) != len(header):
            problem = f"expected {len(header)} ';'-separated fields, found {len(fields)}"
            raise RawFormatError(path, number, problem)
        if not GAUGE_ID.fullmatch(fields[0]) or fields[0] in first_seen:
            problem = f"gauge_id {fields[0]!r} is not an 8-digit USGS id"
            if fields[0] in first_seen:
                problem = f"duplicated gauge_id {fields[0]} (first at line {first_seen[fields[0]]})"
            raise RawFormatError(path, number, problem)
        first_seen[fields[0]] = number
        for name, field, column in zip(header, fields, columns, strict=True):
            value = None if field == "NA" else field if name in texts else finite_float(field)
            if value is None and field != "NA":
                problem = "is empty" if field == "" else "is not a number"
                raise RawFormatError(path, number, f"value {field!r} in column {name} {problem}")
            column.append(value)
    names = [ATTRIBUTES.get(name, (name,))[0] for name in header]
    return pd.DataFrame({
        new: pd.array(column, dtype="string" if name in texts else "float64")
        for new, name, column in zip(names, header, columns, strict=True)
    })

