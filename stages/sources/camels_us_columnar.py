"""Columnar reading of CAMELS-US forcing and streamflow files, a chunk of basins at a time.

The files of a chunk are normalised in bulk (tabs and runs of spaces become one space, blank lines
go) and parsed by Arrow's multi-threaded CSV reader in one call per kind; dates, sentinels, gauge ids
and row order are then checked with vectorised kernels. Anything that does not pass is read again
basin by basin by the line-exact parser (`camels_us_text`), which names the file, the line and the
problem, so the fast path never decides what an error says.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from stages.sources.camels_us_text import (
    DATE_PARTS,
    FORCING_UNITS,
    SENTINEL_MAX,
    STREAMFLOW_FIELDS,
    ForcingHeader,
    forcing_header,
    parse_forcing_file,
    parse_streamflow_file,
)
from stages.tables import RawFormatError, calendar_dates

FT3_TO_M3 = 0.0283168
_WHITESPACE = bytes.maketrans(b"\t\r", b"  ")
_SPACE, _NEWLINE = 32, 10


@dataclass(frozen=True)
class BasinFiles:
    """A basin's forcing and streamflow files (or the error met while looking them up)."""

    basin: str
    forcing: Path | None = None
    streamflow: Path | None = None
    error: RawFormatError | None = None


@dataclass(frozen=True)
class Series:
    """One kind of daily record for the basins of a chunk, basin after basin, dates increasing."""

    counts: np.ndarray  # rows per basin
    days: np.ndarray  # int32 days since 1970-01-01
    columns: dict[str, pa.Array]


@dataclass
class Chunk:
    """What a chunk of basins gave: the `daily` batch, the forcing headers, the errors set aside."""

    daily: pa.Table
    headers: dict[str, ForcingHeader] = field(default_factory=dict)
    errors: list[RawFormatError] = field(default_factory=list)


class IrregularChunk(Exception):
    """The bulk path cannot take this chunk as it is."""


def read_chunk(files: list[BasinFiles], quarantine: bool) -> Chunk:
    """Read a chunk of basins; a bad basin raises, or with `quarantine` is left out and recorded.

    First try: tabs become spaces and (in streamflow files, whose discharge is right-aligned) runs
    of spaces collapse; Arrow then refuses any other irregularity (an empty field, a blank line).
    Second try: every irregularity of whitespace normalised. Last: basin by basin.
    """
    for thorough in (False, True):
        try:
            return bulk_chunk(files, thorough)
        except (IrregularChunk, RawFormatError, pa.ArrowInvalid):
            continue
    return basin_by_basin_chunk(files, quarantine)


def normalised(body: bytes, thorough: bool = True, collapse: bool = True) -> tuple[bytes, int]:
    """Whitespace-separated rows as single-space-separated rows, blank lines dropped; and the row count.

    Not `thorough`: only tabs and carriage returns become spaces and (with `collapse`) runs of
    spaces collapse; leading or trailing spaces and blank lines stay for the parser to refuse.
    """
    text = body.translate(_WHITESPACE)
    if not text.endswith(b"\n"):
        text += b"\n"
    if collapse and (not thorough or b"  " in text):
        text = _drop(text, lambda a, prev, nxt: (a == _SPACE) & (prev == _SPACE))
    if not thorough:
        return text, text.count(b"\n")
    if b" \n" in text or b"\n " in text or text.startswith(b" "):
        text = _drop(text, lambda a, prev, nxt: (a == _SPACE) & ((prev == _NEWLINE) | (nxt == _NEWLINE)))
    if b"\n\n" in text or text.startswith(b"\n"):
        text = _drop(text, lambda a, prev, nxt: (a == _NEWLINE) & (prev == _NEWLINE))
    return text, text.count(b"\n")


def _drop(text: bytes, where) -> bytes:
    """`text` without the bytes where `where(byte, previous byte, next byte)` holds (newline at the ends)."""
    a = np.frombuffer(text, np.uint8)
    prev = np.concatenate(([_NEWLINE], a[:-1]))
    nxt = np.concatenate((a[1:], [_NEWLINE]))
    return a[~where(a, prev, nxt)].tobytes()


def bulk_chunk(files: list[BasinFiles], thorough: bool) -> Chunk:
    """Every file of the chunk in one Arrow parse per kind; IrregularChunk (or the parser's error) if it cannot."""
    if any(f.error is not None for f in files):
        raise IrregularChunk
    headers, names, bodies = {}, None, []
    for f in files:
        data = f.forcing.read_bytes()
        start = 0
        for _ in range(4):
            end = data.find(b"\n", start)
            start = len(data) if end < 0 else end + 1
        head = data[:start].decode("utf-8", errors="replace").splitlines(keepends=True)
        headers[f.basin], file_names = forcing_header(f.forcing, head)
        if names not in (None, file_names):
            raise IrregularChunk
        names = file_names
        bodies.append(data[start:])
    table, counts = _parse(bodies, names, {n: pa.int64() for n in names[:4]}, thorough, collapse=False)
    variables = {name: table.column(name).to_numpy() for name in FORCING_UNITS}
    stacked = np.column_stack(list(variables.values())) if len(table) else np.empty((0, 7))
    if not np.isfinite(stacked).all() or (stacked <= SENTINEL_MAX).any():
        raise IrregularChunk
    basins = [f.basin for f in files]
    forcing = Series(counts, _increasing_days(table, counts), {k: pa.array(v) for k, v in variables.items()})
    kinds = {"gauge_id": pa.string(), "qobs_flag": pa.string()} | dict.fromkeys(DATE_PARTS, pa.int64())
    table, counts = _parse([f.streamflow.read_bytes() for f in files], STREAMFLOW_FIELDS, kinds, thorough)
    if not table.column("gauge_id").combine_chunks().equals(_gauges(basins, counts)):
        raise IrregularChunk
    cfs = table.column("qobs_cfs").to_numpy()
    if not np.isfinite(cfs).all():
        raise IrregularChunk
    areas = np.repeat([headers[b].area_m2 for b in basins], counts)
    flags = table.column("qobs_flag").combine_chunks()
    flow = Series(counts, _increasing_days(table, counts), discharge(cfs, flags, areas))
    return Chunk(daily_table(basins, forcing, flow), headers)


def _parse(bodies: list[bytes], names: list[str], kinds: dict, thorough: bool,
           collapse: bool = True) -> tuple[pa.Table, np.ndarray]:
    """Parse the normalised bodies in one Arrow call; the table and the rows per body (other columns float64)."""
    texts, counts = zip(*(normalised(body, thorough, collapse) for body in bodies), strict=True)
    types = {name: kinds.get(name, pa.float64()) for name in names}
    table = pcsv.read_csv(
        io.BytesIO(b"".join(texts)),
        read_options=pcsv.ReadOptions(column_names=names, use_threads=False, block_size=1 << 26),
        parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False),
        convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                            null_values=[], quoted_strings_can_be_null=False),
    )
    counts = np.array(counts, dtype=np.int64)
    if table.num_rows != counts.sum() or any(table.column(n).null_count for n in names):
        raise IrregularChunk
    return table, counts


def _increasing_days(table: pa.Table, counts: np.ndarray) -> np.ndarray:
    """Validated dates as days since 1970, strictly increasing within every basin."""
    years, months, days = (table.column(part).to_numpy() for part in DATE_PARTS)
    dates, valid = calendar_dates(years, months, days)
    numbers = dates.astype(np.int64)
    steps = np.diff(numbers) > 0
    if len(steps):
        steps[np.cumsum(counts)[:-1][counts[:-1] > 0] - 1] = True  # a new basin may start anywhere
    if not valid.all() or not steps.all() or (counts == 0).any():
        raise IrregularChunk
    return numbers.astype(np.int32)


def discharge(cfs: np.ndarray, flags: pa.Array, areas: np.ndarray) -> dict[str, pa.Array]:
    """`qobs_cfs`, `qobs_mm_d` and `qobs_flag`; missing days (flag `M` or negative discharge) are null.

    mm/d uses the basin area from the forcing header, as neuralhydrology does.
    """
    missing = (cfs < 0) | pc.equal(flags, "M").to_numpy(zero_copy_only=False)
    mm_d = cfs * FT3_TO_M3 * 86400 / areas * 1000
    return {"qobs_cfs": pa.array(cfs, pa.float64(), mask=missing),
            "qobs_mm_d": pa.array(mm_d, pa.float64(), mask=missing), "qobs_flag": flags.cast(pa.string())}


def daily_table(basins: list[str], forcing: Series, flow: Series) -> pa.Table:
    """Forcing and discharge side by side on (`gauge_id`, `date`): every day of either record.

    A day only one record has gets nulls in the other's columns.
    """
    if np.array_equal(forcing.counts, flow.counts) and np.array_equal(forcing.days, flow.days):
        counts, days, columns = forcing.counts, forcing.days, forcing.columns | flow.columns
    else:
        mine, theirs = _row_keys(forcing), _row_keys(flow)
        keys = np.union1d(mine, theirs)
        columns = {}
        for series, row_keys in ((forcing, mine), (flow, theirs)):
            rows = np.full(len(keys), -1, dtype=np.int64)
            rows[np.searchsorted(keys, row_keys)] = np.arange(len(row_keys))
            take = pa.array(rows, mask=rows < 0)
            columns |= {name: values.take(take) for name, values in series.columns.items()}
        counts = np.bincount(keys >> 32, minlength=len(basins))
        days = ((keys & 0xFFFFFFFF) - 2**31).astype(np.int32)
    return pa.table({"gauge_id": _gauges(basins, counts), "date": pa.array(days, pa.int32()).cast(pa.date32()),
                     **columns})


def _row_keys(series: Series) -> np.ndarray:
    basin = np.repeat(np.arange(len(series.counts), dtype=np.int64), series.counts)
    return (basin << 32) | (series.days.astype(np.int64) + 2**31)


def _gauges(basins: list[str], counts: np.ndarray) -> pa.Array:
    indices = pa.array(np.repeat(np.arange(len(basins), dtype=np.int32), counts))
    return pa.DictionaryArray.from_arrays(indices, pa.array(basins, pa.string())).cast(pa.string())


def basin_by_basin_chunk(files: list[BasinFiles], quarantine: bool) -> Chunk:
    """The line-exact path: every basin on its own, errors named by file and line."""
    headers, errors, forcings, flows = {}, [], [], []
    for f in files:
        try:
            if f.error is not None:
                raise f.error
            forcing, header = parse_forcing_file(f.forcing)
            flow = parse_streamflow_file(f.streamflow, f.basin)
        except RawFormatError as error:
            if not quarantine:
                raise
            errors.append(error)
            continue
        headers[f.basin] = header
        forcings.append(forcing)
        flows.append(flow)
    basins = sorted(headers)
    forcing = Series(_counts(forcings), _days(forcings), {
        name: pa.array(np.concatenate([frame[name].to_numpy() for frame in forcings] or [np.empty(0)]))
        for name in FORCING_UNITS})
    cfs = np.concatenate([frame["qobs_cfs"].to_numpy() for frame in flows] or [np.empty(0)])
    flags = pa.array(np.concatenate([frame["qobs_flag"].to_numpy(dtype=object) for frame in flows]
                                    or [np.empty(0, dtype=object)]), pa.string())
    areas = np.repeat([headers[b].area_m2 for b in basins], _counts(flows))
    flow = Series(_counts(flows), _days(flows), discharge(cfs, flags, areas))
    return Chunk(daily_table(basins, forcing, flow), headers, errors)


def _counts(frames: list[pd.DataFrame]) -> np.ndarray:
    return np.array([len(frame) for frame in frames], dtype=np.int64)


def _days(frames: list[pd.DataFrame]) -> np.ndarray:
    parts = [frame["date"].to_numpy(dtype="datetime64[D]").astype(np.int32) for frame in frames]
    return np.concatenate(parts) if parts else np.empty(0, np.int32)
