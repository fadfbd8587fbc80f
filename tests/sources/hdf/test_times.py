"""Times of gridded files: UTC on real calendars, the model's own dates on model calendars (files written here)."""

from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from stages.repository import read_manifest, write_tables
from stages.sources import hdf
from stages.sources.hdf import Params, RawFormatError
from stages.tables import collect

CELLS = ["lat0000_lon0000", "lat0000_lon0001"]
FILL = np.float32(-9999.0)


def write_days(path: Path, calendar: str, units: str, times, fmt: str = "NETCDF4") -> np.ndarray:
    """`tas` (K) on `times` x 1 lat x 2 lon (0-360 longitudes); returns the values as written."""
    values = np.arange(len(times) * 2, dtype=np.float32).reshape(len(times), 1, 2) + 270
    with netCDF4.Dataset(path, "w", format=fmt) as nc:
        for name, size in (("time", len(times)), ("lat", 1), ("lon", 2)):
            nc.createDimension(name, size)
        time = nc.createVariable("time", "f8", ("time",))
        time.setncatts({"units": units, "calendar": calendar, "axis": "T"})
        time[:] = np.asarray(times, dtype=float)
        for name, unit, data in (("lat", "degrees_north", [52.0]), ("lon", "degrees_east", [0.5, 359.5])):
            nc.createVariable(name, "f8", (name,)).setncatts({"units": unit})
            nc[name][:] = data
        tas = nc.createVariable("tas", "f4", ("time", "lat", "lon"), fill_value=FILL)
        tas.units = "K"
        tas[:] = values
    return values


def model_rows(raw_dir: Path, **params) -> list[list]:
    read = collect(hdf.read(raw_dir, Params(**params)))
    assert read["grid"].frame.empty and read["quarantine"].frame.empty
    frame = read["grid_model_calendar"].frame
    assert frame.dtypes.astype(str).to_dict() == {
        "file": "string", "variable": "string", "time": "string", "cell_id": "string", "lat_deg": "float64",
        "lon_deg": "float64", "value": "float64", "unit": "string", "calendar": "string"}
    return frame[["time", "calendar", "cell_id", "value"]].values.tolist()


def test_360_day_file_holding_30_february_keeps_the_models_dates(tmp_path):
    write_days(tmp_path / "tas_day_360.nc", "360_day", "days since 2000-02-28", (0, 1, 2, 3))
    days = ["2000-02-28T00:00:00", "2000-02-29T00:00:00", "2000-02-30T00:00:00", "2000-03-01T00:00:00"]
    assert model_rows(tmp_path) == [[day, "360_day", cell, 270.0 + 2 * t + c]
                                    for t, day in enumerate(days) for c, cell in enumerate(CELLS)]
    frame = hdf.read_grid(tmp_path / "tas_day_360.nc")
    assert frame.columns.tolist() == ["variable", "time", "cell_id", "lat_deg", "lon_deg", "value", "unit", "calendar"]
    assert frame[["lat_deg", "lon_deg"]].values.tolist()[:2] == [[52.0, 0.5], [52.0, -0.5]]


def test_noleap_and_all_leap_keep_their_calendars(tmp_path):
    write_days(tmp_path / "a_noleap.nc", "noleap", "days since 2000-02-27", (0, 1, 2))  # 2000: Gregorian leap year
    write_days(tmp_path / "b_365_day.nc", "365_day", "days since 2000-02-27", (2,), fmt="NETCDF3_CLASSIC")
    write_days(tmp_path / "c_all_leap.nc", "all_leap", "days since 2001-02-28 12:00", (0, 1))
    rows = model_rows(tmp_path)
    assert [row[:2] for row in rows[::2]] == [
        ["2000-02-27T00:00:00", "noleap"], ["2000-02-28T00:00:00", "noleap"], ["2000-03-01T00:00:00", "noleap"],
        ["2000-03-01T00:00:00", "noleap"],  # 365_day is cftime's noleap
        ["2001-02-28T12:00:00", "all_leap"], ["2001-02-29T12:00:00", "all_leap"]]


def test_real_calendars_stay_utc_timestamps_in_grid(tmp_path):
    write_days(tmp_path / "julian.nc", "julian", "days since 1900-02-27", (0, 2))
    write_days(tmp_path / "proleptic.nc", "proleptic_gregorian", "days since 1500-02-28", (0, 1))
    write_days(tmp_path / "standard.nc", "standard", "hours since 2000-02-28 00:00:00 +05:00", (0, 24))
    read = collect(hdf.read(tmp_path, Params()))
    assert read["grid_model_calendar"].frame.empty
    grid = read["grid"].frame.drop_duplicates(["file", "time"])
    assert grid["time"].dt.strftime("%Y-%m-%d %H:%M").tolist() == [
        "1900-03-11 00:00", "1900-03-13 00:00",  # Julian 27 and 29 February 1900, converted
        "1500-02-28 00:00", "1500-03-01 00:00", "2000-02-27 19:00", "2000-02-28 19:00"]


def test_model_times_out_of_file_order_are_sorted_and_checked(tmp_path):
    values = write_days(tmp_path / "run.nc", "360_day", "days since 2000-02-29", (1, 2, 0))
    rows = model_rows(tmp_path)
    assert [row[0] for row in rows[::2]] == ["2000-02-29T00:00:00", "2000-02-30T00:00:00", "2000-03-01T00:00:00"]
    assert [row[3] for row in rows] == values[[2, 0, 1]].reshape(-1).astype(np.float64).tolist()
    write_days(tmp_path / "run.nc", "360_day", "days since 2000-02-29", (0, 1, 1))
    with pytest.raises(RawFormatError) as caught:
        collect(hdf.read(tmp_path, Params()))
    assert caught.value.problem == "/time: duplicated time 2000-02-30T00:00:00 at index 2 (first at index 1)"
    write_days(tmp_path / "run.nc", "360_day", "days since 9999-12-30", (0, 1))
    with pytest.raises(RawFormatError) as caught:
        collect(hdf.read(tmp_path, Params()))
    assert caught.value.problem.startswith("/time: date 10000-01-01 ")
    assert caught.value.problem.endswith(" of calendar '360_day' has a year outside 0-9999")


def test_sub_daily_labels_keep_seconds_and_fractions(tmp_path):
    write_days(tmp_path / "run.nc", "360_day", "seconds since 2000-02-30 23:59:58", (0, 1.5))
    assert [row[0] for row in model_rows(tmp_path)[::2]] == ["2000-02-30T23:59:58", "2000-02-30T23:59:59.500000"]


def test_both_grid_tables_are_written_side_by_side_in_key_order(tmp_path):
    write_days(tmp_path / "a_360.nc", "360_day", "days since 2000-02-29", (0, 1))
    write_days(tmp_path / "b_standard.nc", "standard", "days since 2000-02-28", (0, 1))
    write_days(tmp_path / "c_noleap.nc", "noleap", "days since 2000-02-28", (0, 1))
    out = tmp_path / "out"
    manifest = write_tables(out, hdf.read(tmp_path, Params(batch_rows=2)), {})
    assert {name: manifest["tables"][name]["rows"] for name in ("grid", "grid_model_calendar")} == {
        "grid": 4, "grid_model_calendar": 8}
    model = pq.read_table(out / "grid_model_calendar.parquet").to_pandas()
    assert model[["file", "time"]].drop_duplicates().values.tolist() == [
        ["a_360.nc", "2000-02-29T00:00:00"], ["a_360.nc", "2000-02-30T00:00:00"],
        ["c_noleap.nc", "2000-02-28T00:00:00"], ["c_noleap.nc", "2000-03-01T00:00:00"]]
    assert pq.ParquetFile(out / "grid_model_calendar.parquet").metadata.num_row_groups == 4  # one day each
    grid = pq.read_table(out / "grid.parquet").to_pandas()
    assert grid["time"].drop_duplicates().tolist() == [pd.Timestamp("2000-02-28", tz="UTC"),
                                                       pd.Timestamp("2000-02-29", tz="UTC")]
    assert read_manifest(out)["tables"]["grid_model_calendar"]["columns"]["calendar"] == {"dtype": "string",
                                                                                          "unit": "1"}


def test_a_bad_model_calendar_file_fails_mid_stream_and_writes_no_table(tmp_path):
    write_days(tmp_path / "b_standard.nc", "standard", "days since 2000-02-28", (0, 1))
    write_days(tmp_path / "a_360.nc", "360_day", "days since 2000-02-29", (0, 1, 2))
    with netCDF4.Dataset(tmp_path / "a_360.nc", "a") as nc:
        nc["tas"][2, 0, 1] = -999.0
    with pytest.raises(RawFormatError, match=r"/tas: unexpected sentinel -999 at index \(2, 0, 1\)"):
        write_tables(tmp_path / "out", hdf.read(tmp_path, Params(batch_rows=2)), {})
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []
    read = collect(hdf.read(tmp_path, Params(on_error="quarantine")))
    assert read["grid_model_calendar"].frame.empty and len(read["grid"].frame) == 4
    assert read["quarantine"].frame["file"].tolist() == [str(tmp_path / "a_360.nc")]


def test_read_grid_refuses_a_file_mixing_real_and_model_calendars(tmp_path):
    write_days(tmp_path / "run.nc", "standard", "days since 2000-02-28", (0, 1))
    with netCDF4.Dataset(tmp_path / "run.nc", "a") as nc:
        nc.createDimension("time2", 1)
        time2 = nc.createVariable("time2", "f8", ("time2",))
        time2.setncatts({"units": "days since 2000-02-30", "calendar": "360_day"})
        time2[:] = [0.0]
        nc.createVariable("tas2", "f4", ("time2", "lat", "lon")).units = "K"
        nc["tas2"][:] = np.ones((1, 1, 2), np.float32)
    with pytest.raises(RawFormatError, match="variables on a real and on a model calendar"):
        hdf.read_grid(tmp_path / "run.nc")
    assert hdf.read_grid(tmp_path / "run.nc", ["tas2"])["time"].tolist() == ["2000-02-30T00:00:00"] * 2
    read = collect(hdf.read(tmp_path, Params()))
    assert (len(read["grid"].frame), len(read["grid_model_calendar"].frame)) == (4, 2)
