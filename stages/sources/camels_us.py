"""CAMELS-US source adapter: basin-mean forcings, USGS streamflow and catchment attributes.

Raw layout under ``raw_dir`` (the official ``basin_dataset_public_v1p2`` plus
``camels_attributes_v2.0``; files may also be stored flat, without the HUC folders)::

    basin_mean_forcing/<product>/<huc02>/<gauge>_lump_<...>_forcing_leap.txt
    usgs_streamflow/<huc02>/<gauge>_streamflow_qc.txt
    camels_attributes_v2.0/camels_{clim,geol,hydro,name,soil,topo,vege}.txt

Forcing files hold 3 header lines (latitude [deg], elevation [m], basin area [m2]), a column
header (``Year Mnth Day Hr`` and 7 variables, names capitalised per product) and daily rows whose
fields are separated by spaces and/or tabs. Streamflow files hold ``gauge year month day Q flag``
rows, Q in cubic feet per second, ``-999.00 M`` on missing days. Attribute files are
``;``-separated with ``NA`` for missing values; ``gauge_id`` is an 8-character string.
Output `date` columns are pyarrow `date32` (pandas `ArrowDtype`), whose values are `datetime.date`.

`read` streams the two daily tables a chunk of basins at a time (`camels_us_columnar`), so the
whole dataset is never held in memory; `read_forcings` and `read_streamflow` read one basin.

Time series: Newman et al. (2015), doi:10.5194/hess-19-209-2015.
Attributes and their units: Addor et al. (2017), doi:10.5194/hess-21-5293-2017.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from stages.prefetch import ordered_map
from stages.sources.camels_us_attributes import (
    ATTRIBUTES,
    GAUGE_ID,
    STRING_ATTRIBUTES,
    attribute_units,
    read_attributes,
)
from stages.sources.camels_us_columnar import FT3_TO_M3, BasinFiles, read_chunk
from stages.sources.camels_us_text import (
    FORCING_UNITS,
    SENTINEL_MAX,
    ForcingHeader,
    parse_forcing_file,
    parse_streamflow_file,
)
from stages.tables import LiveChunks, RawFormatError, StreamedTables, Table, TableStream, quarantine_table

__all__ = ["ATTRIBUTES", "STRING_ATTRIBUTES", "SENTINEL_MAX", "FT3_TO_M3", "ForcingHeader", "Params",
           "RawFormatError", "read", "read_attributes", "read_forcings", "read_streamflow"]

CITATION = (
    "Newman, A. J. et al. (2015): Development of a large-sample watershed-scale hydrometeorological"
    " dataset for the contiguous USA, HESS 19, 209-223, doi:10.5194/hess-19-209-2015; Addor, N. et"
    " al. (2017): The CAMELS data set: catchment attributes and meteorology for large-sample"
    " studies, HESS 21, 5293-5313, doi:10.5194/hess-21-5293-2017"
)
LICENSE = "UCAR/NCAR CAMELS terms: free use, citing both papers (redistributors list CC-BY-4.0)"
DATE_DTYPE = pd.ArrowDtype(pa.date32())
HEADER_UNITS = {"header_lat_deg": "deg", "header_elev_m": "m", "header_area_m2": "m2"}
STREAMFLOW_UNITS = {"qobs_cfs": "ft3/s", "qobs_mm_d": "mm/d", "qobs_flag": "1"}
KEYS = ("gauge_id", "date")
DAILY_UNITS = FORCING_UNITS | STREAMFLOW_UNITS
DAILY_TEMPLATE = pd.DataFrame({"gauge_id": pd.array([], dtype="string"), "date": pd.array([], dtype=DATE_DTYPE)} | {
    name: pd.array([], dtype="string" if name == "qobs_flag" else "float64") for name in DAILY_UNITS})
CHUNK_BASINS = 16  # basins parsed per Arrow call: ~18 MB of forcing text at 35 years


class Params(BaseModel):
    """Parameters of `ingest@camels_us`."""

    model_config = ConfigDict(extra="forbid")
    forcing: Literal["daymet", "maurer", "nldas", "maurer_extended"] = "daymet"
    on_error: Literal["raise", "quarantine"] = "raise"


def read(raw_dir: Path, params: Params) -> Iterator[Table | StreamedTables]:
    """Yield the `daily` stream, then the `attributes` and `quarantine` tables.

    `daily` holds forcing and discharge side by side, one row per basin and day of either record
    (nulls where only one has the day). Basins are the gauges with a forcing file for
    `params.forcing`. With `on_error="quarantine"` a basin whose forcing or streamflow file is bad
    is left out of `daily` (and its header columns stay null) and its error goes to the quarantine
    table; attribute-file errors always propagate.
    """
    attributes = read_attributes(raw_dir)
    errors: list[RawFormatError] = []
    files = basin_files(raw_dir, params, errors)
    headers: dict[str, ForcingHeader] = {}

    def chunks() -> Iterator[dict[str, pa.Table]]:
        reader = partial(read_chunk, quarantine=params.on_error == "quarantine")
        groups = [files[i:i + CHUNK_BASINS] for i in range(0, len(files), CHUNK_BASINS)]
        for chunk in ordered_map(reader, groups, workers=2, ahead=1):
            headers.update(chunk.headers)
            errors.extend(chunk.errors)
            yield {"daily": chunk.daily}

    daily = LiveChunks(chunks(), "daily")
    yield StreamedTables((TableStream("daily", DAILY_TEMPLATE, KEYS, DAILY_UNITS),), daily)
    daily.close()
    if not daily.finished:  # the header columns of `attributes` come from the forcing files it reads
        raise RuntimeError("camels_us: the daily stream must be read to the end before the attributes table")
    rows = [(basin, h.lat_deg, h.elev_m, h.area_m2) for basin, h in sorted(headers.items())]
    header_frame = pd.DataFrame(rows, columns=["gauge_id", *HEADER_UNITS]).astype(
        {"gauge_id": "string"} | dict.fromkeys(HEADER_UNITS, "float64")
    )
    merged = attributes.merge(header_frame, on="gauge_id", how="outer")
    merged = merged.sort_values("gauge_id", ignore_index=True)
    yield Table("attributes", merged, keys=("gauge_id",), units=attribute_units(merged.columns) | HEADER_UNITS)
    yield quarantine_table(errors)


def read_forcings(raw_dir: Path, basin: str, product: str) -> tuple[pd.DataFrame, ForcingHeader]:
    """Read one basin's forcing file: columns `date` and the 7 variables, sorted by date."""
    path = _find_one(raw_dir / "basin_mean_forcing" / product, f"**/{basin}_*_forcing_leap.txt")
    return parse_forcing_file(path)


def read_streamflow(raw_dir: Path, basin: str, area_m2: float) -> pd.DataFrame:
    """Read one basin's USGS streamflow: `date`, `qobs_cfs`, `qobs_mm_d`, `qobs_flag`.

    Missing days (flag `M`, or any negative discharge such as `-999.00`) become null discharge;
    the flag is kept. mm/d uses the basin area from the forcing header, as neuralhydrology does.
    """
    if not area_m2 > 0:
        raise ValueError(f"basin area must be positive, got {area_m2}")
    path = _find_one(raw_dir / "usgs_streamflow", f"**/{basin}_streamflow_qc.txt")
    frame = parse_streamflow_file(path, basin)
    cfs = frame["qobs_cfs"].to_numpy(dtype="float64").copy()
    cfs[(cfs < 0) | (frame["qobs_flag"].to_numpy(dtype=object) == "M")] = np.nan
    return pd.DataFrame({"date": frame["date"], "qobs_cfs": cfs,
                         "qobs_mm_d": cfs * FT3_TO_M3 * 86400 / area_m2 * 1000,
                         "qobs_flag": frame["qobs_flag"]})


def basin_files(raw_dir: Path, params: Params, errors: list[RawFormatError]) -> list[BasinFiles]:
    """The basins with a forcing file for the product, each with its two files (or a lookup error)."""
    folder = raw_dir / "basin_mean_forcing" / params.forcing
    forcing: dict[str, list[Path]] = {}
    problems = []
    for path in sorted(folder.glob("**/*_forcing_leap.txt")):
        prefix = path.name.split("_", 1)[0]
        if GAUGE_ID.fullmatch(prefix):
            forcing.setdefault(prefix, []).append(path)
        else:
            problems.append(RawFormatError(path, None, "file name does not start with a gauge id"))
    if not forcing and not problems:
        problems.append(RawFormatError(folder, None, "no forcing files for this product"))
    if problems and params.on_error == "raise":
        raise problems[0]
    errors.extend(problems)
    flow_folder = raw_dir / "usgs_streamflow"
    flows: dict[str, list[Path]] = {}
    for path in sorted(flow_folder.glob("**/*_streamflow_qc.txt")):
        flows.setdefault(path.name.removesuffix("_streamflow_qc.txt"), []).append(path)
    found = []
    for basin in sorted(forcing):
        try:
            found.append(BasinFiles(basin, _one(folder, f"**/{basin}_*_forcing_leap.txt", forcing[basin]),
                                    _one(flow_folder, f"**/{basin}_streamflow_qc.txt", flows.get(basin, []))))
        except RawFormatError as error:
            found.append(BasinFiles(basin, error=error))
    return found


def _find_one(folder: Path, pattern: str) -> Path:
    return _one(folder, pattern, sorted(folder.glob(pattern)))


def _one(folder: Path, pattern: str, matches: list[Path]) -> Path:
    if len(matches) != 1:
        found = ", ".join(str(m) for m in matches) if matches else "none"
        raise RawFormatError(folder / pattern, None, f"expected one matching file, found {found}")
    return matches[0]
