"""Which variables of a gridded file are read, and how every other one is recorded (files written here)."""

from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import pytest

from stages.ingest import ingest
from stages.repository import read_table, validate_table
from stages.sources import hdf
from stages.sources.hdf import Params, RawFormatError
from stages.tables import collect

CMIP_FILL = np.float32(1e20)


def tables(raw_dir: Path, **params) -> dict[str, pd.DataFrame]:
    read = collect(hdf.read(raw_dir, Params(**params)))
    for table in read.values():
        validate_table(table)
    return {name: table.frame for name, table in read.items()}


def quarantined(path: Path, variable: str, reason: str, count: int) -> dict:
    return {"file": str(path), "line": -1, "column": variable, "problem": f"/{variable}: not read, {reason}",
            "count": count}


def write_ocean(path: Path) -> np.ndarray:
    """A CMIP6 Omon-like `tos` on a curvilinear (time, j, i) grid; returns the values as written.

    Latitude / longitude are 2-D, named by the `coordinates` attribute, with `vertices_*` bounds;
    `time_bnds` bounds the months; one cell is land (fill) in both months.
    """
    values = np.random.default_rng(21).uniform(-1.8, 30.0, (2, 2, 3)).round(2).astype(np.float32)
    values[:, 1, 0] = CMIP_FILL
    with netCDF4.Dataset(path, "w") as nc:
        nc.setncatts({"Conventions": "CF-1.7 CMIP-6.2", "table_id": "Omon", "variable_id": "tos"})
        for name, size in (("time", None), ("j", 2), ("i", 3), ("bnds", 2), ("vertices", 4)):
            nc.createDimension(name, size)
        time = nc.createVariable("time", "f8", ("time",))
        time.setncatts({"units": "days since 1850-01-01", "calendar": "proleptic_gregorian", "axis": "T",
                        "standard_name": "time", "bounds": "time_bnds"})
        time[:] = [15.5, 45.0]
        nc.createVariable("time_bnds", "f8", ("time", "bnds"))[:] = [[0.0, 31.0], [31.0, 59.0]]
        for name, size in (("j", 2), ("i", 3)):
            index = nc.createVariable(name, "i4", (name,))
            index.setncatts({"units": "1", "long_name": f"cell index along {name} dimension"})
            index[:] = np.arange(size)
        for name, unit, data in (("latitude", "degrees_north", [[-10.0, -10.5, -11.0], [60.0, 62.5, 65.0]]),
                                 ("longitude", "degrees_east", [[350.0, 359.5, 0.5], [100.0, 180.0, 270.25]])):
            coordinate = nc.createVariable(name, "f8", ("j", "i"))
            coordinate.setncatts({"standard_name": name, "units": unit, "bounds": f"vertices_{name}"})
            coordinate[:] = data
            nc.createVariable(f"vertices_{name}", "f8", ("j", "i", "vertices"))[:] = np.zeros((2, 3, 4))
        tos = nc.createVariable("tos", "f4", ("time", "j", "i"), fill_value=CMIP_FILL)
        tos.setncatts({"standard_name": "sea_surface_temperature", "units": "degC", "missing_value": CMIP_FILL,
                       "coordinates": "latitude longitude", "cell_measures": "area: areacello",
                       "cell_methods": "area: mean where sea time: mean"})
        tos[:] = values
    return values


def test_cmip6_curvilinear_ocean_variable_is_read_with_its_2d_cell_centres(tmp_path, capsys):
    values = write_ocean(tmp_path / "tos_Omon.nc")
    read = tables(tmp_path)
    assert read["cells"].drop(columns="file").values.tolist() == [
        ["j0000_i0000", 0, 0, -10.0, -10.0], ["j0000_i0001", 0, 1, -10.5, -0.5], ["j0000_i0002", 0, 2, -11.0, 0.5],
        ["j0001_i0000", 1, 0, 60.0, 100.0], ["j0001_i0001", 1, 1, 62.5, -180.0], ["j0001_i0002", 1, 2, 65.0, -89.75]]
    grid = read["grid"]
    assert set(grid["file"]) == {"tos_Omon.nc"} and set(grid["variable"]) == {"tos"} and set(grid["unit"]) == {"degC"}
    assert grid["time"].drop_duplicates().tolist() == [pd.Timestamp("1850-01-16 12:00", tz="UTC"),
                                                       pd.Timestamp("1850-02-15", tz="UTC")]
    assert grid["cell_id"].tolist() == read["cells"]["cell_id"].tolist() * 2
    assert grid[["lat_deg", "lon_deg"]].values.tolist() == read["cells"][["lat_deg", "lon_deg"]].values.tolist() * 2
    land = [3, 9]
    assert grid.index[grid["value"].isna()].tolist() == land
    expected = values.astype(np.float64).reshape(-1)
    assert grid["value"].drop(land).tolist() == np.delete(expected, land).tolist()
    assert read["quarantine"].empty and capsys.readouterr().err == ""  # bounds describe, they are not data
    assert hdf.read_grid(tmp_path / "tos_Omon.nc", ["tos"])["value"].notna().sum() == 10


def write_levels(path: Path) -> None:
    """A CMIP6 Amon-like file: `ta` on hybrid sigma-pressure levels `lev` (4-D) and surface pressure `ps`."""
    rng = np.random.default_rng(22)
    with netCDF4.Dataset(path, "w") as nc:
        for name, size in (("time", 2), ("lev", 2), ("lat", 2), ("lon", 3)):
            nc.createDimension(name, size)
        time = nc.createVariable("time", "f8", ("time",))
        time.setncatts({"units": "days since 2000-01-01", "calendar": "standard", "axis": "T"})
        time[:] = [0.0, 1.0]
        lev = nc.createVariable("lev", "f8", ("lev",))
        lev.setncatts({"standard_name": "atmosphere_hybrid_sigma_pressure_coordinate", "axis": "Z",
                       "positive": "down", "units": "1", "formula_terms": "p0: p0 a: a b: b ps: ps"})
        lev[:] = [0.99, 0.5]
        for name, data in (("a", [0.0, 0.2]), ("b", [0.99, 0.3])):
            nc.createVariable(name, "f8", ("lev",))[:] = data
        nc.createVariable("p0", "f8", ()).setncatts({"units": "Pa"})
        nc["p0"][:] = 100000.0
        for name, unit, data in (("lat", "degrees_north", [-30.0, 30.0]), ("lon", "degrees_east", [0.0, 120.0, 240.0])):
            nc.createVariable(name, "f8", (name,)).setncatts({"units": unit})
            nc[name][:] = data
        ta = nc.createVariable("ta", "f4", ("time", "lev", "lat", "lon"))
        ta.units = "K"
        ta[:] = rng.uniform(200, 300, (2, 2, 2, 3)).astype(np.float32)
        ps = nc.createVariable("ps", "f4", ("time", "lat", "lon"))
        ps.units = "Pa"
        ps[:] = np.arange(12, dtype=np.float32).reshape(2, 2, 3) + 98000


def test_4d_variable_with_a_level_axis_is_recorded_in_quarantine_manifest_and_stderr(tmp_path, capsys):
    raw = tmp_path / "raw"
    raw.mkdir()
    write_levels(raw / "ta_Amon.nc")
    reason = "(time, lev, lat, lon) has a vertical axis (lev): the grid table has no level key"
    manifest = ingest("hdf", raw, {}, tmp_path / "out")  # on_error: raise; a layout left out is no error
    row = quarantined(raw / "ta_Amon.nc", "ta", reason, 2 * 2 * 2 * 3)
    assert read_table(tmp_path / "out", "quarantine").to_dict("records") == [row]
    assert manifest["tables"]["quarantine"]["rows"] == 1
    assert manifest["tables"]["quarantine"]["notes"] == [f"{raw / 'ta_Amon.nc'}: /ta: not read, {reason}"]
    assert capsys.readouterr().err == f"hdf: {raw / 'ta_Amon.nc'}: /ta: {'not read, ' + reason}\n"
    grid = read_table(tmp_path / "out", "grid")
    assert grid["variable"].unique().tolist() == ["ps"]  # a, b, p0: formula terms of lev, not data
    assert grid["value"].tolist() == list(np.arange(12, dtype=np.float64) + 98000)
    with pytest.raises(RawFormatError) as caught:
        hdf.read_grid(raw / "ta_Amon.nc", ["ta"])
    assert caught.value.problem == f"/ta: not on a (time, y, x) grid: {reason}"


def write_stations(path: Path, feature_type: str | None, fmt: str = "NETCDF4") -> None:
    """Three stations, four days: `tas` (time, station), `pr` (station, time), per-station lat/lon/alt/name."""
    with netCDF4.Dataset(path, "w", format=fmt) as nc:
        if feature_type:
            nc.setncatts({"Conventions": "CF-1.8", "featureType": feature_type})
        for name, size in (("station", 3), ("time", 4), ("name_strlen", 4)):
            nc.createDimension(name, size)
        time = nc.createVariable("time", "f8", ("time",))
        time.setncatts({"units": "days since 2010-07-01", "standard_name": "time"})
        time[:] = np.arange(4)
        for name, unit, data in (("lat", "degrees_north", [46.5, 47.0, 45.8]), ("lon", "degrees_east", [7.4, 8.5, 6.1]),
                                 ("alt", "m", [560.0, 420.0, 1600.0])):
            nc.createVariable(name, "f8", ("station",)).setncatts({"units": unit})
            nc[name][:] = data
        name = nc.createVariable("station_name", "S1", ("station", "name_strlen"))
        name.cf_role = "timeseries_id"
        name[:] = netCDF4.stringtochar(np.array(["BERN", "ZRH_", "SION"], dtype="S4"))
        for variable, dims, unit in (("tas", ("time", "station"), "K"), ("pr", ("station", "time"), "kg m-2 s-1")):
            data = nc.createVariable(variable, "f4", dims)
            data.setncatts({"units": unit, "coordinates": "lat lon alt station_name"})
            data[:] = np.ones([4 if dim == "time" else 3 for dim in dims], np.float32)


def test_station_series_are_recorded_not_read(tmp_path, capsys):
    write_stations(tmp_path / "dsg.nc", "timeSeries")
    write_stations(tmp_path / "plain.nc", None, fmt="NETCDF3_CLASSIC")
    read = tables(tmp_path)
    dsg = "of a CF discrete sampling geometry (featureType timeSeries): its features are points, not grid cells"
    assert read["quarantine"].to_dict("records") == [
        quarantined(tmp_path / "dsg.nc", "pr", f"(station, time) {dsg}", 12),
        quarantined(tmp_path / "dsg.nc", "tas", f"(time, station) {dsg}", 12),
        quarantined(tmp_path / "plain.nc", "pr",
                    "(station, time): a series per station along station (1-D latitude/longitude), not a grid", 12),
        quarantined(tmp_path / "plain.nc", "tas",
                    "(time, station): a series per station along station (1-D latitude/longitude), not a grid", 12)]
    assert read["grid"].empty and read["cells"].empty
    assert capsys.readouterr().err.splitlines() == [
        f"hdf: {tmp_path / 'dsg.nc'}: /pr: not read, (station, time) {dsg}",
        f"hdf: {tmp_path / 'dsg.nc'}: /tas: not read, (time, station) {dsg}",
        f"hdf: {tmp_path / 'plain.nc'}: /pr: not read, (station, time): a series per station along station "
        "(1-D latitude/longitude), not a grid",
        f"hdf: {tmp_path / 'plain.nc'}: /tas: not read, (time, station): a series per station along station "
        "(1-D latitude/longitude), not a grid"]


def write_mixed(path: Path, fmt: str) -> None:
    """`sm` (time, lat, lon) beside a series, an unplaceable (time, a, b), a static field, bounds and a grid mapping."""
    with netCDF4.Dataset(path, "w", format=fmt) as nc:
        for name, size in (("time", 2), ("lat", 2), ("lon", 2), ("a", 2), ("b", 3), ("nv", 2)):
            nc.createDimension(name, size)
        nc.createVariable("time", "f8", ("time",)).setncatts({"units": "days since 2001-01-01"})
        nc["time"][:] = [0, 1]
        for name, unit, data in (("lat", "degrees_north", [40.0, 41.0]), ("lon", "degrees_east", [10.0, 11.0])):
            nc.createVariable(name, "f8", (name,)).setncatts({"units": unit, "bounds": f"{name}_bnds"})
            nc[name][:] = data
            nc.createVariable(f"{name}_bnds", "f8", (name, "nv"))[:] = np.stack([np.asarray(data) - 0.5,
                                                                                  np.asarray(data) + 0.5], 1)
        nc.createVariable("crs", "i4", ()).setncatts({"grid_mapping_name": "latitude_longitude"})
        for name, dims in (("sm", ("time", "lat", "lon")), ("global_mean", ("time",)), ("band", ("time", "a", "b")),
                           ("elevation", ("lat", "lon"))):
            variable = nc.createVariable(name, "f4", dims)
            variable.setncatts({"units": "1", "grid_mapping": "crs"})
            variable[:] = np.zeros([{"time": 2, "lat": 2, "lon": 2, "a": 2, "b": 3}[dim] for dim in dims], np.float32)


def test_every_other_layout_is_recorded_with_its_reason(tmp_path, capsys):
    write_mixed(tmp_path / "classic.nc", "NETCDF3_CLASSIC")
    write_mixed(tmp_path / "four.nc", "NETCDF4")
    read = tables(tmp_path)
    assert read["grid"].groupby("file")["variable"].unique().map(list).to_dict() == {
        "classic.nc": ["sm"], "four.nc": ["sm"]}
    band = ("band", "(time, a, b): no latitude/longitude for (a, b)", 12)
    series = ("global_mean", "(time): not a (time, y, x) grid", 2)
    static = ("elevation", "static (lat, lon): no time axis", 4)  # a NetCDF-4 file lists it in `datasets`
    assert read["quarantine"].to_dict("records") == [
        quarantined(tmp_path / "classic.nc", *band), quarantined(tmp_path / "classic.nc", *static),
        quarantined(tmp_path / "classic.nc", *series), quarantined(tmp_path / "four.nc", *band),
        quarantined(tmp_path / "four.nc", *series)]
    assert len(capsys.readouterr().err.splitlines()) == 5
    assert read["datasets"].query("file == 'four.nc' and dataset == '/elevation'")["shape"].tolist() == ["2x2"]
    assert tables(tmp_path, datasets=["elevation"])["matrix_values"]["value"].tolist() == [0.0] * 4


def test_named_variables_leave_the_others_out_unrecorded_and_unplaceable_names_raise(tmp_path, capsys):
    write_mixed(tmp_path / "classic.nc", "NETCDF3_CLASSIC")
    read = tables(tmp_path, variables=["sm"])
    assert read["quarantine"].empty and capsys.readouterr().err == ""
    assert read["grid"]["variable"].unique().tolist() == ["sm"]
    for name, reason in (("band", "(time, a, b): no latitude/longitude for (a, b)"),
                         ("lat_bnds", "static (lat, nv): no time axis"), ("lat", "a coordinate (lat)")):
        with pytest.raises(RawFormatError) as caught:
            tables(tmp_path, variables=[name])
        assert caught.value.problem == f"/{name}: not on a (time, y, x) grid: {reason}"


def test_read_grid_names_what_it_leaves_out_on_stderr(tmp_path, capsys):
    write_levels(tmp_path / "ta_Amon.nc")
    assert hdf.read_grid(tmp_path / "ta_Amon.nc")["variable"].unique().tolist() == ["ps"]
    assert capsys.readouterr().err == (f"hdf: {tmp_path / 'ta_Amon.nc'}: /ta: not read, (time, lev, lat, lon) has "
                                       "a vertical axis (lev): the grid table has no level key\n")


def test_a_bad_file_is_quarantined_whole_without_its_layout_rows(tmp_path, capsys):
    write_levels(tmp_path / "ta_Amon.nc")
    with netCDF4.Dataset(tmp_path / "ta_Amon.nc", "a") as nc:
        nc["ps"].delncattr("units")  # not a layout question: the file is bad
    read = tables(tmp_path, on_error="quarantine")
    assert read["quarantine"].to_dict("records") == [{
        "file": str(tmp_path / "ta_Amon.nc"), "line": -1, "column": None, "count": None,
        "problem": "/ps: grid variable has no units attribute"}]
    assert capsys.readouterr().err == ""


def test_variables_in_groups_below_the_root_are_recorded_not_dropped(tmp_path, capsys):
    write_ocean(tmp_path / "tos_Omon.nc")
    with netCDF4.Dataset(tmp_path / "tos_Omon.nc", "a") as nc:
        forcing = nc.createGroup("forcing")
        forcing.createDimension("step", 3)
        forcing.createVariable("step", "i4", ("step",))[:] = [0, 1, 2]
        forcing.createVariable("tas", "f4", ("step",))[:] = [1.0, 2.0, 3.0]
        deep = forcing.createGroup("deep")
        deep.createVariable("flag", "i1", ())
    read = tables(tmp_path)
    assert set(read["grid"]["variable"]) == {"tos"}
    rows = read["quarantine"][read["quarantine"]["column"].str.startswith("/forcing")].to_dict("records")
    assert rows == [
        {"file": str(tmp_path / "tos_Omon.nc"), "line": -1, "column": "/forcing/deep/flag", "count": 1,
         "problem": "/forcing/deep/flag: not read, (a scalar) in group /forcing/deep: grids are placed from the "
                    "root group only"},
        {"file": str(tmp_path / "tos_Omon.nc"), "line": -1, "column": "/forcing/tas", "count": 3,
         "problem": "/forcing/tas: not read, (step) in group /forcing: grids are placed from the root group only"}]
    err = capsys.readouterr().err
    assert f"hdf: {tmp_path / 'tos_Omon.nc'}: /forcing/tas: not read" in err
    assert f"hdf: {tmp_path / 'tos_Omon.nc'}: /forcing/deep/flag: not read" in err
