"""Validated per-site series -> one tidy stacked frame (a whole table, or one batch of a stream).

A `Stacker` owns one growing numpy array per output column. Each site's series is copied into
them as soon as it is read (its Arrow columns are dropped right after, so the next file's parse
reuses that memory) and `-9999` becomes NaN (floats) or a masked value (`_QC` flags, Int8) on the
way: no per-site frames, no concatenation copy. When the number of rows is not known ahead,
capacity follows an estimate from the bytes read so far, with headroom. The arrays live on
anonymous memory mappings, whose pages are committed only when first written, so unused capacity
costs address space, not memory; and they get base pages, not the transparent huge pages numpy
requests for large arrays, whose first touch is markedly slower where the kernel has to compact
memory to provide them (measured: ~2x on a 2-core VM).

Sites are stacked in the order added; if that is not their sorted order (site codes whose case
differs), `frame` reorders the rows once.
"""

from __future__ import annotations

import mmap

import numpy as np
import pandas as pd
import pyarrow as pa

from stages.sources.fluxnet_ch4_csv import SENTINEL
from stages.sources.fluxnet_ch4_series import SiteSeries, time_array

_TIME_DTYPES = {True: np.dtype("datetime64[D]"), False: np.dtype("datetime64[ns]")}  # by "is a date"
_HEADROOM = 1.25  # over the estimated total rows, so capacity rarely has to grow (a copy)


class Stacker:
    """Stacks per-site series behind a `site_id` column, one site at a time."""

    def __init__(self, time_names: tuple[str, ...], expected_bytes: int = 0, *, rows: int = 0,
                 columns: dict[str, tuple[str, bool]] | None = None, utc: bool = False):
        """Size the arrays from `expected_bytes` (total size of the files to add) or exact `rows`.

        `columns` fixes the variable columns ahead (`column -> (unit, is a flag)`, in output order):
        all of them are output, sites without one get nulls. Without it they are the ones met, in
        first-seen order over the sorted sites. `utc` makes the times tz-aware even with no site.
        """
        self.time_names = time_names
        self.units: dict[str, str] = {}
        self._expected_bytes = expected_bytes
        self._bytes = 0
        self._sites: list[str] = []
        self._lengths: list[int] = []
        self._site_units: list[dict[str, str]] = []
        self._size = 0
        self._capacity = 0
        self._utc = utc
        self._times: dict[str, np.ndarray] = {}
        self._values: dict[str, np.ndarray] = {}  # float64 columns, or int8 flag data
        self._masks: dict[str, np.ndarray] = {}  # flag columns: True where missing
        self._declared = columns
        for column, (unit, is_flag) in (columns or {}).items():
            self._new_column(column, unit, is_flag)
        if rows:
            self._grow(rows)

    def add(self, site_id: str, series: SiteSeries, file_bytes: int = 0) -> None:
        """Copy one site's rows in after those already added; empties `series.columns`."""
        n = series.rows
        self._bytes += file_bytes
        self._reserve(n)
        begin, end = self._size, self._size + n
        for name in self.time_names:
            self._times[name][begin:end] = series.times[name]
        for column, values in series.columns.items():
            if column not in self._values:
                self._new_column(column, series.units[column], column in series.flags)
            self._copy(column, values, begin, end)
        for column in self._values.keys() - series.columns.keys():
            self._fill_missing(column, begin, end)
        self._site_units.append(dict(series.units))
        series.columns.clear()
        self._utc |= series.utc
        self._sites.append(site_id)
        self._lengths.append(n)
        self._size = end

    def frame(self, with_site_id: bool = True) -> pd.DataFrame:
        """The stacked rows, sorted by site, as a frame (the stacker is spent afterwards)."""
        self._trim()
        order = sorted(range(len(self._sites)), key=lambda i: self._sites[i])
        take = None if order == sorted(order) else self._row_order(order)
        data: dict[str, object] = {}
        if with_site_id:
            sites = np.array([self._sites[i] for i in order], dtype=object)
            codes = np.repeat(np.arange(len(order)), [self._lengths[i] for i in order])
            data["site_id"] = pd.arrays.ArrowStringArray(
                pa.chunked_array([pa.array(sites, pa.large_string()).take(codes)], pa.large_string()))
        for name in self.time_names:
            data[name] = time_array(_taken(self._times.pop(name), take), self._utc)
        self.units = {}  # columns in first-seen order over the sorted sites; the first site's unit
        for i in order:
            self.units |= {c: u for c, u in self._site_units[i].items() if c not in self.units}
        if self._declared is not None:
            self.units = {column: unit for column, (unit, _) in self._declared.items()}
        for column in self.units:
            values = _taken(self._values.pop(column), take)
            if column in self._masks:
                values = pd.arrays.IntegerArray(values, _taken(self._masks.pop(column), take))
            data[column] = values
        return pd.DataFrame(data, copy=False)

    def _reserve(self, n: int) -> None:
        needed = self._size + n
        if needed <= self._capacity:
            return
        estimate = 0
        if self._expected_bytes and self._bytes:
            estimate = int(needed * max(self._expected_bytes, self._bytes) / self._bytes * _HEADROOM)
        self._grow(max(needed, estimate, self._capacity * 3 // 2))

    def _grow(self, capacity: int) -> None:
        if not self._times:
            self._times = {name: _allocate(0, _TIME_DTYPES[name == "date"]) for name in self.time_names}
        for arrays in (self._times, self._values, self._masks):
            for name, old in arrays.items():
                arrays[name] = _allocate(capacity, old.dtype)
                arrays[name][:self._size] = old[:self._size]
        self._capacity = capacity

    def _trim(self) -> None:
        if not self._times:
            self._times = {name: np.empty(0, _TIME_DTYPES[name == "date"]) for name in self.time_names}
        for arrays in (self._times, self._values, self._masks):
            for name, values in arrays.items():
                arrays[name] = values[:self._size]  # the untouched tail was never committed

    def _new_column(self, column: str, unit: str, is_flag: bool) -> None:
        self.units[column] = unit
        if is_flag:
            self._values[column] = _allocate(self._capacity, np.int8)
            self._masks[column] = _allocate(self._capacity, np.bool_)
        else:
            self._values[column] = _allocate(self._capacity, np.float64)
        self._fill_missing(column, 0, self._size)

    def _fill_missing(self, column: str, begin: int, end: int) -> None:
        if column in self._masks:
            self._values[column][begin:end] = 0
            self._masks[column][begin:end] = True
        else:
            self._values[column][begin:end] = np.nan

    def _copy(self, column: str, values: pa.ChunkedArray, begin: int, end: int) -> None:
        if column in self._masks:
            raw = values.to_numpy()
            missing = (raw == SENTINEL) | np.isnan(raw)  # NaN: a non-finite token
            self._values[column][begin:end] = np.where(missing, 0, raw)
            self._masks[column][begin:end] = missing
            return
        target = self._values[column][begin:end]
        position = 0
        for chunk in values.chunks:
            part = chunk.to_numpy()
            target[position:position + len(part)] = part
            position += len(part)
        np.putmask(target, target == SENTINEL, np.nan)

    def _row_order(self, order: list[int]) -> np.ndarray:
        starts = np.concatenate([[0], np.cumsum(self._lengths)])
        return np.concatenate([np.arange(starts[i], starts[i + 1]) for i in order])


def _allocate(capacity: int, dtype: np.dtype | type) -> np.ndarray:
    """An uninitialised array on its own anonymous mapping (pages committed on first write)."""
    dtype = np.dtype(dtype)
    if not capacity:
        return np.empty(0, dtype)
    return np.frombuffer(mmap.mmap(-1, capacity * dtype.itemsize), dtype)


def _taken(values: np.ndarray, take: np.ndarray | None) -> np.ndarray:
    return values if take is None else values[take]
