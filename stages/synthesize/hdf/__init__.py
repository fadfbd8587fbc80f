"""Synthetic raw files for the `hdf` source: a gridded model run (NetCDF-4) and three 10x matrices.

Writes under `out_dir` what `stages.sources.hdf` reads::

    simulation/bucket_water_balance.nc               CF-1.8 NetCDF-4, daily (time, lat, lon)
    cellranger_v3/filtered_feature_bc_matrix.h5      10x v3 layout (/matrix, /matrix/features)
    cellranger_v2/filtered_gene_bc_matrices_h5.h5    10x v2 layout (one group per genome)
    cellranger_aggr/outs/aggregation.csv             an aggregation of 12 libraries (`aggr`)
    cellranger_aggr/outs/count/filtered_feature_bc_matrix.h5

The NetCDF file holds a daily snow + soil-bucket water-balance run over a continental-US box
(`bucket`): forcing `precip`, `tair`, `pet`, fluxes `aet`, `runoff`, states `soil_water`,
`swe`, and the static bucket capacity `whc`; ocean cells are `_FillValue`. Variables are float32,
chunked and zlib-compressed. Count matrices come from a cell-type mixture model (`tenx`).
Nothing time-dependent is written (no `history`, HDF5 object times off), so the same params give
byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from stages.sources.hdf.sparse_write import write_v2, write_v3
from stages.synthesize.hdf import aggr, bucket, tenx

NETCDF_FILE = "simulation/bucket_water_balance.nc"
V3_FILE = "cellranger_v3/filtered_feature_bc_matrix.h5"
V2_FILE = "cellranger_v2/filtered_gene_bc_matrices_h5.h5"
FILL = np.float32(-9999.0)
TIME_UNITS = "days since {year}-01-01 00:00:00"
VARIABLE_ATTRS = {  # name -> (units, long_name, standard_name or None, cell_methods)
    "precip": ("mm d-1", "precipitation (rain and snow)", "lwe_precipitation_rate", "time: mean"),
    "tair": ("degC", "daily mean near-surface air temperature", "air_temperature", "time: mean"),
    "pet": ("mm d-1", "potential evapotranspiration (Hamon)", None, "time: mean"),
    "aet": ("mm d-1", "actual evapotranspiration", None, "time: mean"),
    "runoff": ("mm d-1", "total runoff (drainage and saturation excess)", None, "time: mean"),
    "soil_water": ("mm", "soil water storage at the end of the day", None, "time: point"),
    "swe": ("mm", "snow water equivalent at the end of the day",
            "lwe_thickness_of_surface_snow_amount", "time: point"),
}


class Params(BaseModel):
    """Parameters of `synthesize@hdf`."""

    model_config = ConfigDict(extra="forbid")
    seed: int = 42
    n_lat: int = Field(ge=2, le=1024)
    n_lon: int = Field(ge=2, le=1024)
    n_days: int = Field(ge=2, le=36600)
    first_year: int = Field(2000, ge=1900, le=2100)
    n_features: int = Field(ge=4, le=100_000)
    n_barcodes: int = Field(ge=1, le=1_000_000)


def write(out_dir: Path, params: Params) -> None:
    """Generate the three raw files of the synthetic `hdf` source under `out_dir`."""
    write_simulation(out_dir / NETCDF_FILE, params)
    rng = np.random.default_rng([params.seed, 21])
    write_v3(out_dir / V3_FILE, tenx.simulate_v3(rng, params.n_features, params.n_barcodes))
    rng = np.random.default_rng([params.seed, 22])
    genomes = tenx.simulate_v2(rng, max(2, params.n_features // 4), max(1, params.n_barcodes // 2))
    write_v2(out_dir / V2_FILE, genomes)
    n_genes = max(aggr.MIN_GENES, params.n_features - len(tenx.ANTIBODIES))  # tiny files: the named genes
    aggr.write(out_dir, np.random.default_rng([params.seed, 23]), n_genes, max(20, params.n_barcodes // 5))


def write_simulation(path: Path, params: Params) -> None:
    """Run the bucket model and stream it, a year of days at a time, into a CF NetCDF-4 file."""
    domain = bucket.make_domain(params.seed, params.n_lat, params.n_lon)
    dates = np.datetime64(f"{params.first_year}-01-01") + np.arange(params.n_days)
    doy = (dates - dates.astype("datetime64[Y]")).astype(int) + 1
    path.parent.mkdir(parents=True, exist_ok=True)
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        _define(nc, domain, params)
        ocean = ~domain.land
        start = 0
        for block in bucket.simulate(domain, params.seed, doy):
            days = len(block["precip"])
            for name, values in block.items():
                values = values.astype(np.float32)
                values[:, ocean] = FILL
                nc[name][start:start + days] = values
            start += days


def _define(nc: netCDF4.Dataset, domain: bucket.Domain, params: Params) -> None:
    nc.setncatts({
        "Conventions": "CF-1.8",
        "title": "Synthetic daily snow and soil-bucket water balance over a continental-US box",
        "institution": "scibench (synthetic data)",
        # the module's name before the generators became packages (now hdf/bucket.py); kept as it was because
        # it is written into every file, whose bytes DVC and the provenance record hash
        "source": "stages.synthesize.hdf_bucket: degree-day snow, Hamon PET, single soil bucket",
        "comment": "precip - aet - runoff = d(soil_water + swe) for every land cell and day",
        "seed": np.int64(params.seed),
    })
    ny, nx = domain.land.shape
    nc.createDimension("time", params.n_days)
    nc.createDimension("lat", ny)
    nc.createDimension("lon", nx)
    nc.createDimension("nv", 2)
    time = nc.createVariable("time", "i4", ("time",))
    time.setncatts({"standard_name": "time", "long_name": "time", "axis": "T", "calendar": "standard",
                    "units": TIME_UNITS.format(year=params.first_year)})
    time[:] = np.arange(params.n_days, dtype=np.int32)
    for name, centres, axis, standard_name in (("lat", domain.lat, "Y", "latitude"),
                                               ("lon", domain.lon, "X", "longitude")):
        coordinate = nc.createVariable(name, "f8", (name,))
        coordinate.setncatts({
            "standard_name": standard_name, "long_name": f"{standard_name} of the cell centre",
            "units": f"degrees_{'north' if axis == 'Y' else 'east'}", "axis": axis, "bounds": f"{name}_bnds",
        })
        coordinate[:] = centres
        half = (centres[1] - centres[0]) / 2
        bounds = nc.createVariable(f"{name}_bnds", "f8", (name, "nv"))
        bounds[:] = np.stack([centres - half, centres + half], axis=1)
    crs = nc.createVariable("crs", "i4", ())
    crs.setncatts({"grid_mapping_name": "latitude_longitude", "longitude_of_prime_meridian": 0.0,
                   "semi_major_axis": 6378137.0, "inverse_flattening": 298.257223563})
    chunks = (min(params.n_days, 73), min(ny, 64), min(nx, 64))
    for name, (units, long_name, standard_name, methods) in VARIABLE_ATTRS.items():
        variable = nc.createVariable(name, "f4", ("time", "lat", "lon"), zlib=True, complevel=4,
                                     shuffle=True, chunksizes=chunks, fill_value=FILL)
        attrs = {"units": units, "long_name": long_name, "cell_methods": methods, "grid_mapping": "crs"}
        variable.setncatts(attrs | ({"standard_name": standard_name} if standard_name else {}))
    whc = nc.createVariable("whc", "f4", ("lat", "lon"), zlib=True, complevel=4, fill_value=FILL)
    whc.setncatts({"units": "mm", "long_name": "soil bucket water-holding capacity", "grid_mapping": "crs"})
    whc[:] = np.where(domain.land, domain.whc_mm, FILL).astype(np.float32)
