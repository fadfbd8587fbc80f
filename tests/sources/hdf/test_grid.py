"""Gridded NetCDF / HDF5 files generated in the test with a fixed seed, and their bad variants."""

from __future__ import annotations

from pathlib import Path

import h5py
import netCDF4
import numpy as np
import pandas as pd
import pytest

from stages.repository import validate_table
from stages.sources import hdf
from stages.sources.hdf import Params, RawFormatError
from stages.tables import collect

FILL = np.float32(-9999.0)


def write_nc(path: Path, *, fmt: str = "NETCDF4", time_units: str | None = "days since 2001-01-01",
             calendar: str = "standard", times=(0, 1, 2), units: str | None = "mm",
             order=("time", "lat", "lon"), fill=FILL, extra=None) -> np.ndarray:
    """sm on 3 days x 2 lat x 3 lon (0-360 longitudes), one filled value; returns the written array."""
    values = np.random.default_rng(11).uniform(10, 50, (len(times), 2, 3)).round(1).astype(np.float32)
    values[1, 0, 2] = FILL
    with netCDF4.Dataset(path, "w", format=fmt) as nc:
        for name, size in (("time", len(times)), ("lat", 2), ("lon", 3)):
            nc.createDimension(name, size)
        time = nc.createVariable("time", "i4", ("time",))
        time.setncatts({"calendar": calendar} | ({"units": time_units} if time_units else {}))
        time[:] = np.asarray(times)
        nc.createVariable("lat", "f8", ("lat",)).setncatts({"units": "degrees_north"})
        nc["lat"][:] = [40.0, 41.0]
        nc.createVariable("lon", "f8", ("lon",)).setncatts({"units": "degrees_east"})
        nc["lon"][:] = [259.5, 260.5, 261.5]
        axes = {"time": 0, "lat": 1, "lon": 2}
        sm = nc.createVariable("sm", "f4", order, fill_value=fill)
        sm[:] = values.transpose([axes[dim] for dim in order])
        if units:
            sm.units = units
        nc.createVariable("elevation", "f4", ("lat", "lon")).setncatts({"units": "m"})
        for name, (dims, data) in (extra or {}).items():
            nc.createVariable(name, "f4", dims)[:] = data
    return values


def grid_error(tmp_path: Path, path: Path, **params) -> str:
    with pytest.raises(RawFormatError) as caught:
        collect(hdf.read(tmp_path, Params(**params)))
    assert (caught.value.path, caught.value.line) == (str(path), None)
    return caught.value.problem


def test_grid_variable_becomes_a_long_table_with_nulls_and_utc_times(tmp_path):
    values = write_nc(tmp_path / "run.nc")
    read = collect(hdf.read(tmp_path, Params()))
    for table in read.values():
        validate_table(table)
    grid = read["grid"].frame
    assert len(grid) == 3 * 6 and set(grid["variable"]) == {"sm"} and set(grid["unit"]) == {"mm"}
    assert str(grid["time"].dtype) == "datetime64[us, UTC]"
    days = [pd.Timestamp(f"2001-01-0{day}", tz="UTC") for day in (1, 2, 3)]
    assert grid["time"].iloc[[0, 6, 12]].tolist() == days
    assert grid["cell_id"].iloc[:6].tolist() == ["lat0000_lon0000", "lat0000_lon0001", "lat0000_lon0002",
                                                 "lat0001_lon0000", "lat0001_lon0001", "lat0001_lon0002"]
    expected = values.astype(np.float64).reshape(-1)
    assert grid["value"].isna().tolist() == [i == 6 + 2 for i in range(18)]
    assert np.array_equal(grid["value"].to_numpy()[~grid["value"].isna()], expected[expected != FILL])
    cells = read["cells"].frame
    assert cells[["row", "col", "lat_deg", "lon_deg"]].values.tolist()[:3] == [
        [0, 0, 40.0, -100.5], [0, 1, 40.0, -99.5], [0, 2, 40.0, -98.5]]
    assert read["grid"].units["value"] == "varies: see column unit"
    assert "/elevation" in set(read["datasets"].frame["dataset"])  # static: listed, not gridded


def test_dimension_order_does_not_matter(tmp_path):
    write_nc(tmp_path / "a.nc")
    write_nc(tmp_path / "b.nc", order=("lon", "time", "lat"))
    a, b = hdf.read_grid(tmp_path / "a.nc"), hdf.read_grid(tmp_path / "b.nc")
    pd.testing.assert_frame_equal(a, b)


def test_classic_netcdf3_reads_like_netcdf4(tmp_path):
    write_nc(tmp_path / "classic.nc", fmt="NETCDF3_CLASSIC")
    write_nc(tmp_path / "four.nc4")
    read = collect(hdf.read(tmp_path, Params()))["grid"].frame
    classic, four = (read[read["file"] == name].drop(columns="file").reset_index(drop=True)
                     for name in ("classic.nc", "four.nc4"))
    pd.testing.assert_frame_equal(classic, four)


def test_curvilinear_time_y_x_grid_takes_lat_lon_from_2d_coordinates(tmp_path):
    path = tmp_path / "swath.nc"
    with netCDF4.Dataset(path, "w") as nc:
        for name, size in (("time", 2), ("y", 2), ("x", 2)):
            nc.createDimension(name, size)
        time = nc.createVariable("time", "f8", ("time",))
        time.units = "hours since 2000-01-01 00:00:00 +05:00"
        nc["time"][:] = [0.0, 6.0]
        for name, unit, data in (("nav_lat", "degrees_north", [[30, 30.5], [31, 31.5]]),
                                 ("nav_lon", "degrees_east", [[-90, -89], [-90.5, -89.5]])):
            nc.createVariable(name, "f8", ("y", "x")).setncatts({"units": unit})
            nc[name][:] = data
        swe = nc.createVariable("swe", "f4", ("time", "y", "x"), fill_value=np.float32(1e20))
        swe.setncatts({"units": "kg m-2", "coordinates": "nav_lat nav_lon"})
        swe[:] = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    grid = hdf.read_grid(path)
    assert grid["time"].unique().tolist() == [pd.Timestamp("1999-12-31 19:00", tz="UTC"),
                                              pd.Timestamp("2000-01-01 01:00", tz="UTC")]
    assert grid["cell_id"].iloc[:4].tolist() == ["y0000_x0000", "y0000_x0001", "y0001_x0000", "y0001_x0001"]
    assert grid[["lat_deg", "lon_deg"]].iloc[:4].values.tolist() == [[30, -90], [30.5, -89], [31, -90.5],
                                                                     [31.5, -89.5]]
    assert grid["value"].tolist() == list(range(8))


def test_hdf5_with_dimension_scales_is_read_as_a_grid(tmp_path):
    with h5py.File(tmp_path / "model.h5", "w") as h5:
        scales = []
        for name, data, unit in (("time", np.arange(2), "days since 1990-06-01"),
                                 ("lat", [10.0, 11.0], "degrees_north"), ("lon", [5.0], "degrees_east")):
            scale = h5.create_dataset(name, data=data, track_times=False)
            scale.attrs["units"] = unit
            scale.make_scale(name)
            scales.append(scale)
        data = np.array([[[1.5], [2.5]], [[3.5], [-1.0]]])
        runoff = h5.create_dataset("runoff", data=data, track_times=False)
        runoff.attrs.update({"units": "mm d-1", "_FillValue": -1.0})
        for axis, scale in enumerate(scales):
            runoff.dims[axis].attach_scale(scale)
    read = {name: t.frame for name, t in collect(hdf.read(tmp_path, Params())).items()}
    grid = read["grid"]
    attributes = read["datasets"].set_index("dataset").loc["/runoff", "attributes"]
    assert attributes.startswith('{"DIMENSION_LIST": [["<reference to /time>"], ["<reference to /lat>"]')
    assert grid["time"].dt.strftime("%Y-%m-%d").tolist() == ["1990-06-01"] * 2 + ["1990-06-02"] * 2
    assert grid["value"].tolist()[:3] == [1.5, 2.5, 3.5] and pd.isna(grid["value"].iloc[3])


def test_netcdf_without_units(tmp_path):
    write_nc(tmp_path / "run.nc", units=None)
    assert grid_error(tmp_path, tmp_path / "run.nc") == "/sm: grid variable has no units attribute"
    write_nc(tmp_path / "run.nc", time_units=None)
    assert grid_error(tmp_path, tmp_path / "run.nc") == "/time: time coordinate has no units attribute"
    write_nc(tmp_path / "run.nc", time_units="fortnights")
    assert grid_error(tmp_path, tmp_path / "run.nc") == (
        "/time: time coordinate has units 'fortnights', not CF 'UNIT since DATE'")


def test_duplicated_time(tmp_path):
    write_nc(tmp_path / "run.nc", times=(0, 1, 1))
    assert grid_error(tmp_path, tmp_path / "run.nc") == (
        "/time: duplicated time 2001-01-02 00:00:00 at index 2 (first at index 1)")


def test_undeclared_sentinel_is_an_error_and_default_fill_is_null(tmp_path):
    write_nc(tmp_path / "run.nc", fill=np.float32(1e20))
    assert grid_error(tmp_path, tmp_path / "run.nc") == (
        "/sm: unexpected sentinel -9999 at index (1, 0, 2) (not declared as _FillValue or missing_value)")
    write_nc(tmp_path / "run.nc", extra={"et": (("time", "lat", "lon"), np.ma.masked_all((3, 2, 3)))})
    with pytest.raises(RawFormatError, match="/et: grid variable has no units"):
        hdf.read_grid(tmp_path / "run.nc")
    with netCDF4.Dataset(tmp_path / "run.nc", "a") as nc:
        nc["et"].units = "mm"
    assert hdf.read_grid(tmp_path / "run.nc", ["et"])["value"].isna().all()  # NetCDF default fill


def test_variable_selection(tmp_path):
    write_nc(tmp_path / "run.nc")
    assert hdf.read_grid(tmp_path / "run.nc", ["sm", "tas"])["variable"].unique().tolist() == ["sm"]
    with pytest.raises(RawFormatError, match=r"/elevation: not on a \(time, y, x\) grid"):
        hdf.read_grid(tmp_path / "run.nc", ["elevation"])
    with pytest.raises(RawFormatError) as caught:
        collect(hdf.read(tmp_path, Params(variables=["tas"])))
    assert (caught.value.path, caught.value.problem) == (str(tmp_path), "no grid variable 'tas'")
    assert len(hdf.read_grid_cells(tmp_path / "run.nc")) == 6
