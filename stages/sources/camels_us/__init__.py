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

The rows pass through the steps once, in order, `CHUNK_BASINS` basins at a time: `files` (each
basin's two files and its forcing header, read for every basin first) -> `parse` (Arrow reads the
chunk's rows) -> `check` (one vectorised test per rule) -> `assemble` (forcing and discharge side
by side). A chunk that fails a test is read again basin by basin, so the error names the first bad
basin's file and line (found by reading that file line by line). `attributes` reads the attribute
files. `read_forcings` and `read_streamflow` read one basin through the same steps.

No thread of its own: Arrow's CSV reader parses a chunk on its thread pool, and the repository
writer reads the next chunk on a background thread while it compresses this one (`make bench`
size, 671 basins x 35 years on 2 cores, scibench path: 4.97 s; two more threads reading chunks
ahead, with Arrow single-threaded, measured 5.34 s).

Time series: Newman et al. (2015), doi:10.5194/hess-19-209-2015.
Attributes and their units: Addor et al. (2017), doi:10.5194/hess-21-5293-2017.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from stages.sources.camels_us.assemble import FT3_TO_M3, concatenated, daily_table, discharge
from stages.sources.camels_us.attributes import ATTRIBUTES, STRING_ATTRIBUTES, attribute_units, read_attributes
from stages.sources.camels_us.check import (
    SENTINEL_MAX,
    Rejected,
    Series,
    check_forcing_file,
    check_forcings,
    check_streamflow_file,
    check_streamflows,
)
from stages.sources.camels_us.files import FORCING_UNITS, Basin, ForcingHeader, find_basins, forcing_head, one_file
from stages.sources.camels_us.parse import Unreadable, parse_forcings, parse_streamflows
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
DAILY_UNITS = FORCING_UNITS | {"qobs_cfs": "ft3/s", "qobs_mm_d": "mm/d", "qobs_flag": "1"}
DAILY_TEMPLATE = pd.DataFrame({"gauge_id": pd.array([], dtype="string"), "date": pd.array([], dtype=DATE_DTYPE)} | {
    name: pd.array([], dtype="string" if name == "qobs_flag" else "float64") for name in DAILY_UNITS})
DAILY = TableStream("daily", DAILY_TEMPLATE, ("gauge_id", "date"), DAILY_UNITS)
EMPTY_DAILY = pa.Schema.from_pandas(DAILY_TEMPLATE, preserve_index=False).empty_table()
CHUNK_BASINS = 16  # basins parsed per Arrow call (~18 MB of forcing text at 35 years); one row group each


class Params(BaseModel):
    """Parameters of `ingest@camels_us`."""

    model_config = ConfigDict(extra="forbid")
    forcing: Literal["daymet", "maurer", "nldas", "maurer_extended"] = "daymet"
    on_error: Literal["raise", "quarantine"] = "raise"


@dataclass(frozen=True)
class Chunk:
    """The `daily` rows of a chunk of basins, and the errors of the basins left out (by gauge)."""

    daily: pa.Table
    errors: dict[str, RawFormatError]


def read(raw_dir: Path, params: Params) -> Iterator[Table | StreamedTables]:
    """Yield the `daily` stream, then the `attributes` and `quarantine` tables.

    `daily` holds forcing and discharge side by side, one row per basin and day of either record
    (nulls where only one has the day). Basins are the gauges with a forcing file for
    `params.forcing`. With `on_error="quarantine"` a basin whose forcing or streamflow file is bad
    is left out of `daily` (and its header columns stay null) and its error goes to the quarantine
    table; attribute-file errors always propagate. Which basins are bad is known once `daily` has
    been read, so it must be read to the end before the next table is asked for.
    """
    attributes = read_attributes(raw_dir)
    basins, problems = find_basins(raw_dir, params.forcing)
    if problems and params.on_error == "raise":
        raise problems[0]
    left_out: dict[str, RawFormatError] = {}  # filled as the stream is read
    chunks = LiveChunks(_daily_chunks(basins, params.on_error == "quarantine", left_out), "daily")
    yield StreamedTables((DAILY,), chunks)
    chunks.close()
    if not chunks.finished:
        raise RuntimeError("camels_us: the daily stream must be read to the end before the attributes table")
    headers = pd.DataFrame([(b.gauge_id, b.header.lat_deg, b.header.elev_m, b.header.area_m2)
                            for b in basins if b.gauge_id not in left_out], columns=["gauge_id", *HEADER_UNITS])
    headers = headers.astype({"gauge_id": "string"} | dict.fromkeys(HEADER_UNITS, "float64"))
    merged = attributes.merge(headers, on="gauge_id", how="outer").sort_values("gauge_id", ignore_index=True)
    yield Table("attributes", merged, keys=("gauge_id",), units=attribute_units(merged.columns) | HEADER_UNITS)
    yield quarantine_table(problems + list(left_out.values()))


def read_forcings(raw_dir: Path, basin: str, product: str) -> tuple[pd.DataFrame, ForcingHeader]:
    """Read one basin's forcing file: columns `date` and the 7 variables, sorted by date."""
    path = one_file(raw_dir / "basin_mean_forcing" / product, f"**/{basin}_*_forcing_leap.txt")
    header, _, _ = forcing_head(path, path.read_bytes())
    series = check_forcing_file(path)
    return _frame(series, {name: series.columns[name].to_numpy() for name in FORCING_UNITS}), header


def read_streamflow(raw_dir: Path, basin: str, area_m2: float) -> pd.DataFrame:
    """Read one basin's USGS streamflow: `date`, `qobs_cfs`, `qobs_mm_d`, `qobs_flag`.

    Missing days (flag `M`, or any negative discharge such as `-999.00`) become null discharge;
    the flag is kept. mm/d uses the basin area from the forcing header, as neuralhydrology does.
    """
    if not area_m2 > 0:
        raise ValueError(f"basin area must be positive, got {area_m2}")
    series = check_streamflow_file(one_file(raw_dir / "usgs_streamflow", f"**/{basin}_streamflow_qc.txt"), basin)
    columns = discharge(series.columns["qobs_cfs"].to_numpy(), series.columns["qobs_flag"], area_m2)
    return _frame(series, {"qobs_cfs": columns["qobs_cfs"].to_numpy(zero_copy_only=False),
                           "qobs_mm_d": columns["qobs_mm_d"].to_numpy(zero_copy_only=False),
                           "qobs_flag": pd.array(columns["qobs_flag"].to_pylist(), dtype="string")})


def _daily_chunks(basins: list[Basin], quarantine: bool,
                  left_out: dict[str, RawFormatError]) -> Iterator[dict[str, pa.Table]]:
    """The `daily` batches, one a chunk of basins; the errors of the basins left out go to `left_out`."""
    for start in range(0, len(basins), CHUNK_BASINS):
        chunk = _read_chunk(basins[start:start + CHUNK_BASINS], quarantine)
        left_out.update(chunk.errors)
        yield {"daily": chunk.daily}
    # Hand the chunks' Arrow memory back: the bench aligns next in this process, whose peak RSS was
    # 454-475 MB without this line and 440-463 MB with it (2 runs each).
    pa.default_memory_pool().release_unused()


def _read_chunk(basins: list[Basin], quarantine: bool) -> Chunk:
    """The `daily` rows of some basins; a bad basin raises, or with `quarantine` is left out and recorded."""
    if all(basin.error is None for basin in basins):
        try:
            forcing = check_forcings(parse_forcings([b.forcing for b in basins]))
            flow = check_streamflows(parse_streamflows([b.streamflow for b in basins]), [b.gauge_id for b in basins])
            return Chunk(_daily(basins, forcing, flow), {})
        except (Unreadable, Rejected):
            pass  # a bad basin: the loop below finds which, and why
    good, parts, errors = [], [], {}
    for basin in basins:
        try:
            if basin.error is not None:
                raise basin.error
            parts.append((check_forcing_file(basin.forcing), check_streamflow_file(basin.streamflow, basin.gauge_id)))
            good.append(basin)
        except RawFormatError as error:
            if not quarantine:
                raise
            errors[basin.gauge_id] = error
    if not good:
        return Chunk(EMPTY_DAILY, errors)
    forcing, flow = (concatenated(list(series)) for series in zip(*parts, strict=True))
    return Chunk(_daily(good, forcing, flow), errors)


def _daily(basins: list[Basin], forcing: Series, flow: Series) -> pa.Table:
    return daily_table([b.gauge_id for b in basins], [b.header.area_m2 for b in basins], forcing, flow)


def _frame(series: Series, columns: dict) -> pd.DataFrame:
    dates = pd.arrays.ArrowExtensionArray(pa.array(series.days, pa.int32()).cast(pa.date32()))
    return pd.DataFrame({"date": dates, **columns})
