"""The streamed tables: grid values per cell and time, batches in key order, bad files leave no rows."""

from __future__ import annotations

from pathlib import Path

import h5py
import netCDF4
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.sparse

from stages.repository import check_key_order, write_tables
from stages.sources import hdf
from stages.sources.hdf import Params, RawFormatError
from stages.sources.hdf.stream import GRID_KEYS, counts_batches, slabs
from stages.tables import StreamedTables, collect

FILL = np.float32(-9999.0)
CELLS = ["lat0000_lon0000", "lat0000_lon0001", "lat0000_lon0002",
         "lat0001_lon0000", "lat0001_lon0001", "lat0001_lon0002"]


def write_cube(path: Path, times=(0, 1, 2), fill=FILL, seed: int = 5) -> dict[str, np.ndarray]:
    """`sm` (mm) and `et` (mm d-1) on days `times` x 2 lat x 3 lon; returns the arrays as written."""
    rng = np.random.default_rng(seed)
    written = {}
    with netCDF4.Dataset(path, "w") as nc:
        for name, size in (("time", len(times)), ("lat", 2), ("lon", 3)):
            nc.createDimension(name, size)
        nc.createVariable("time", "i4", ("time",)).setncatts({"units": "days since 2001-01-01"})
        nc["time"][:] = np.asarray(times)
        for name, unit, data in (("lat", "degrees_north", [40.0, 41.0]), ("lon", "degrees_east", [-100, -99, -98])):
            nc.createVariable(name, "f8", (name,)).setncatts({"units": unit})
            nc[name][:] = data
        for name, unit in (("sm", "mm"), ("et", "mm d-1")):
            values = rng.uniform(1, 50, (len(times), 2, 3)).round(2).astype(np.float32)
            variable = nc.createVariable(name, "f4", ("time", "lat", "lon"), fill_value=fill)
            variable.units = unit
            variable[:] = values
            written[name] = values
    return written


def stream_of(raw_dir: Path, **params) -> StreamedTables:
    grid = next(hdf.read(raw_dir, Params(**params)))
    assert isinstance(grid, StreamedTables) and [s.name for s in grid.streams] == ["grid", "grid_model_calendar"]
    return grid


def batches(raw_dir: Path, **params) -> list[pa.Table]:
    return [chunk["grid"] for chunk in stream_of(raw_dir, **params).chunks]


def test_slabs_are_whole_days_or_whole_y_rows_of_one_day():
    assert slabs(5, 2, 3, batch_rows=12) == [(0, 2, 0, 2), (2, 4, 0, 2), (4, 5, 0, 2)]
    assert slabs(2, 3, 3, batch_rows=6) == [(0, 1, 0, 2), (0, 1, 2, 3), (1, 2, 0, 2), (1, 2, 2, 3)]
    assert slabs(1, 2, 3, batch_rows=1) == [(0, 1, 0, 1), (0, 1, 1, 2)]  # at least one y row
    assert slabs(3, 0, 3, batch_rows=10) == []


def test_streamed_grid_holds_each_value_at_its_cell_and_time(tmp_path):
    written = write_cube(tmp_path / "run.nc")
    grid = collect(hdf.read(tmp_path, Params(batch_rows=4)))["grid"].frame
    assert len(grid) == 2 * 3 * 6 and grid["variable"].unique().tolist() == ["et", "sm"]
    row = grid[(grid["variable"] == "sm") & (grid["cell_id"] == "lat0001_lon0002")
               & (grid["time"] == pd.Timestamp("2001-01-03", tz="UTC"))]
    assert row[["file", "lat_deg", "lon_deg", "unit"]].values.tolist() == [["run.nc", 41.0, -98.0, "mm"]]
    assert row["value"].tolist() == [float(written["sm"][2, 1, 2])]
    et = grid[grid["variable"] == "et"]
    assert et["value"].tolist() == written["et"].astype(np.float64).reshape(-1).tolist()
    assert et["cell_id"].tolist() == CELLS * 3 and set(et["unit"]) == {"mm d-1"}


def test_batches_arrive_in_key_order_across_slabs(tmp_path):
    write_cube(tmp_path / "a.nc")
    (tmp_path / "b").mkdir()
    write_cube(tmp_path / "b" / "c.nc", seed=6)
    by_days = batches(tmp_path, batch_rows=12)  # 2 days per batch
    assert [(b["file"][0].as_py(), b["variable"][0].as_py(), b.num_rows) for b in by_days] == [
        ("a.nc", "et", 12), ("a.nc", "et", 6), ("a.nc", "sm", 12), ("a.nc", "sm", 6),
        ("b/c.nc", "et", 12), ("b/c.nc", "et", 6), ("b/c.nc", "sm", 12), ("b/c.nc", "sm", 6)]
    by_rows = batches(tmp_path, batch_rows=4)  # one y row of one day per batch
    assert len(by_rows) == 2 * 2 * 3 * 2 and {b.num_rows for b in by_rows} == {3}
    assert by_rows[1].column("cell_id").to_pylist() == CELLS[3:]
    last = None
    for batch in by_rows:
        check_key_order("grid", batch, GRID_KEYS, last)  # raises unless strictly increasing
        last = batch.slice(batch.num_rows - 1)
    whole = pa.concat_tables(batches(tmp_path))
    assert len(batches(tmp_path)) == 4  # default: one batch per file and variable
    assert pa.concat_tables(by_rows).equals(whole) and pa.concat_tables(by_days).equals(whole)
    write_tables(tmp_path / "out", hdf.read(tmp_path, Params(batch_rows=12)), {})
    assert pq.ParquetFile(tmp_path / "out" / "grid.parquet").metadata.num_row_groups == 8


def test_times_out_of_file_order_are_streamed_sorted(tmp_path):
    written = write_cube(tmp_path / "run.nc", times=(2, 0, 1))
    grid = collect(hdf.read(tmp_path, Params(batch_rows=6, variables=["sm"])))["grid"].frame
    assert grid["time"].dt.day.tolist() == [1] * 6 + [2] * 6 + [3] * 6
    expected = written["sm"][[1, 2, 0]].astype(np.float64).reshape(-1)
    assert grid["value"].tolist() == expected.tolist()


def write_bad(path: Path) -> None:
    """A cube whose undeclared sentinel -999 sits on the last day, second y row."""
    write_cube(path)
    with netCDF4.Dataset(path, "a") as nc:
        nc["sm"][2, 1, 0] = -999.0


def test_bad_file_in_quarantine_mode_leaves_no_rows(tmp_path):
    write_bad(tmp_path / "a_bad.nc")  # streamed first, were it streamed
    write_cube(tmp_path / "good.nc")
    read = collect(hdf.read(tmp_path, Params(on_error="quarantine", batch_rows=3)))
    assert read["quarantine"].frame.to_dict("records") == [{
        "file": str(tmp_path / "a_bad.nc"), "line": -1, "column": None, "count": None,
        "problem": "/sm: unexpected sentinel -999 at index (2, 1, 0) (not declared as _FillValue or missing_value)"}]
    for name in ("grid", "cells", "datasets"):
        assert set(read[name].frame["file"]) == {"good.nc"}, name
    assert len(read["grid"].frame) == 2 * 3 * 6


def test_bad_file_in_raise_mode_fails_mid_stream_and_writes_no_table(tmp_path):
    write_bad(tmp_path / "a_bad.nc")
    stream = stream_of(tmp_path, batch_rows=6)  # metadata passed: the error lies in the data
    chunks = iter(stream.chunks)
    assert [next(chunks)["grid"].num_rows for _ in range(3)] == [6, 6, 6]  # et, all three days
    with pytest.raises(RawFormatError, match=r"/sm: unexpected sentinel -999 at index \(2, 1, 0\)"):
        list(chunks)
    out = tmp_path / "out"
    with pytest.raises(RawFormatError) as caught:
        write_tables(out, hdf.read(tmp_path, Params(batch_rows=6)), {})
    assert caught.value.path == str(tmp_path / "a_bad.nc")
    assert sorted(p.name for p in out.iterdir()) == []


def test_counts_stream_whole_barcodes_in_key_order(tmp_path):
    dense = np.array([[1, 0, 2, 0],   # G3
                      [0, 3, 4, 5],   # G1
                      [6, 7, 0, 0]])  # G2; columns: barcodes TT-1, AC-1, GG-1, CA-1
    csc = scipy.sparse.csc_matrix(dense)
    with h5py.File(tmp_path / "m.h5", "w") as h5:
        for name, values in {"barcodes": [b"TT-1", b"AC-1", b"GG-1", b"CA-1"], "data": csc.data,
                             "indices": csc.indices, "indptr": csc.indptr, "shape": dense.shape,
                             "features/id": [b"G3", b"G1", b"G2"], "features/name": [b"c", b"a", b"b"],
                             "features/feature_type": [b"Gene Expression"] * 3}.items():
            h5.create_dataset(f"matrix/{name}", data=np.asarray(values), track_times=False)
    matrix = hdf.read_sparse_matrix(tmp_path / "m.h5")
    rows = [b.select(["barcode", "feature_id", "count"]).to_pylist() for b in counts_batches(matrix, "m.h5", 3)]
    assert [[tuple(r.values()) for r in batch] for batch in rows] == [
        [("AC-1", "G1", 3), ("AC-1", "G2", 7), ("CA-1", "G1", 5)], [("GG-1", "G1", 4), ("GG-1", "G3", 2)],
        [("TT-1", "G2", 6), ("TT-1", "G3", 1)]]
    assert [b.num_rows for b in counts_batches(matrix, "m.h5", 1)] == [2, 1, 2, 2]  # one barcode each
    counts = collect(hdf.read(tmp_path, Params(batch_rows=1)))["counts"].frame
    assert counts.values.tolist() == [["m.h5", *row] for batch in rows for row in
                                      (tuple(r.values()) for r in batch)]
    assert counts.dtypes.astype(str).tolist() == ["string", "string", "string", "int64"]
    pd.testing.assert_frame_equal(counts.drop(columns="file"), matrix.counts_frame())
