"""Stage a query's native modalities: a NetCDF grid, GeoTIFF layers, structures or a 10x matrix, cut to its scope.

A multimodal hypothesis task (`data.native` in its task.yaml) hands the agent each modality in the
format it is analysed in, with no join done for it (MoSciBench): the grid keeps its own lat/lon
axes, the imagery its own projection and pixels, and the entity table only keys and coordinates.
Relating a cell or a gauge to its pixels is the agent's alignment step.

What the query may see is cut here, as for its tables: the grid to the query's period and to the
smallest rectangle of cells around its entities (cells of the rectangle outside the scope are
fill), the imagery to the entities' footprint plus the task's margin. The raw files are read
through the repository's `native_files` inventory and their SHA-256 checked first
(`stages.domains.native_files`). Generator settings (the synthetic file's `seed`) are not copied.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import rasterio
from rasterio.merge import merge
from rasterio.warp import transform_bounds

from stages.catalog import NativeSpec
from stages.domains.imagery_join import verified_path
from stages.repository import read_table

HIDDEN_ATTRIBUTES = {"seed"}  # generator settings of a synthetic file: never staged
BOX_COLUMNS = ("lon_west_deg", "lat_south_deg", "lon_east_deg", "lat_north_deg")


class NativeStagingError(ValueError):
    """A native modality cannot be cut for a query; the message names the file and the problem."""


def footprint(entities: pd.DataFrame) -> tuple[float, float, float, float]:
    """The (west, south, east, north) lon/lat box around the entities: cell boxes or points."""
    if set(BOX_COLUMNS) <= set(entities.columns):
        west, south, east, north = (entities[c] for c in BOX_COLUMNS)
        return float(west.min()), float(south.min()), float(east.max()), float(north.max())
    lat = [c for c in entities.columns if "lat" in c and c.endswith("_deg")]
    lon = [c for c in entities.columns if "lon" in c and c.endswith("_deg")]
    if not lat or not lon:
        raise NativeStagingError("the entities table has no lon/lat bounds or coordinates to cut imagery with")
    return (float(entities[lon[0]].min()), float(entities[lat[0]].min()),
            float(entities[lon[0]].max()), float(entities[lat[0]].max()))


def _files(inventory: pd.DataFrame, modality: str, layer: str | None = None) -> list[Path]:
    rows = inventory[(inventory["modality"] == modality)
                     & ((inventory["layer"] == layer) if layer is not None else True)]
    if rows.empty:
        raise NativeStagingError(f"the repository's native_files inventory has no {modality} "
                                 f"{layer or ''} file".rstrip())
    return [verified_path(Path(r.raw_dir), r.file, r.sha256) for r in rows.itertuples(index=False)]


def _days(time: netCDF4.Variable) -> list[date]:
    stamps = netCDF4.num2date(time[:], time.units, getattr(time, "calendar", "standard"),
                              only_use_cftime_datetimes=False)
    return [date(s.year, s.month, s.day) for s in stamps]


def stage_grid(spec: NativeSpec, source: Path, entities: pd.DataFrame, start: date, end: date,
               target: Path) -> None:
    """Write the grid's `spec.variables` over the query's cells and period to `target` (NetCDF-4)."""
    rows, cols = entities["row"].astype(int), entities["col"].astype(int)
    r0, r1, c0, c1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    inside = np.zeros((r1 - r0, c1 - c0), dtype=bool)
    inside[rows - r0, cols - c0] = True
    with netCDF4.Dataset(source) as raw:
        missing = sorted(set(spec.variables) - set(raw.variables))
        if missing:
            raise NativeStagingError(f"{source}: no grid variables {missing}")
        days = np.array(_days(raw["time"]))
        steps = np.flatnonzero((days >= start) & (days <= end))
        if steps.size == 0:
            raise NativeStagingError(f"{source}: no time step between {start} and {end}")
        t0, t1 = int(steps[0]), int(steps[-1]) + 1
        with netCDF4.Dataset(target, "w", format="NETCDF4") as out:
            out.setncatts({k: raw.getncattr(k) for k in raw.ncattrs() if k not in HIDDEN_ATTRIBUTES})
            sizes = {"time": t1 - t0, "lat": r1 - r0, "lon": c1 - c0}
            for name, dim in raw.dimensions.items():
                out.createDimension(name, sizes.get(name, len(dim)))
            cuts = {"time": slice(t0, t1), "lat": slice(r0, r1), "lon": slice(c0, c1)}
            keep = [n for n, v in raw.variables.items()
                    if n in spec.variables or not set(v.dimensions) & {"time", "lat", "lon"}
                    or v.dimensions in (("time",), ("lat",), ("lon",), ("lat", "nv"), ("lon", "nv"))]
            for name in keep:
                _copy_variable(raw[name], out, cuts, inside, name in spec.variables)


def _copy_variable(variable: netCDF4.Variable, out: netCDF4.Dataset, cuts: dict, inside: np.ndarray,
                   mask_outside: bool) -> None:
    fill = variable.getncattr("_FillValue") if "_FillValue" in variable.ncattrs() else None
    copy = out.createVariable(variable.name, variable.dtype, variable.dimensions, zlib=True,
                              complevel=4, fill_value=fill)
    copy.setncatts({k: variable.getncattr(k) for k in variable.ncattrs() if k != "_FillValue"})
    variable.set_auto_maskandscale(False)
    values = np.asarray(variable[tuple(cuts.get(d, slice(None)) for d in variable.dimensions)])
    if mask_outside and variable.dimensions[-2:] == ("lat", "lon"):
        values = np.where(inside, values, fill)
    copy.set_auto_maskandscale(False)
    copy[...] = values


def stage_layers(spec: NativeSpec, inventory: pd.DataFrame, entities: pd.DataFrame, target: Path) -> None:
    """Write one GeoTIFF per layer: the mosaic over the entities' footprint, in its own projection."""
    west, south, east, north = footprint(entities)
    margin = spec.margin_deg
    box = (west - margin, south - margin, east + margin, north + margin)
    target.mkdir()
    for layer in spec.variables:
        tiles = [rasterio.open(path) for path in _files(inventory, "imagery", layer)]
        try:
            crs, nodata = tiles[0].crs, tiles[0].nodata
            bounds = transform_bounds("EPSG:4326", crs, *box, densify_pts=21)
            mosaic, transform = merge(tiles, bounds=bounds, nodata=nodata)
            profile = {"driver": "GTiff", "height": mosaic.shape[1], "width": mosaic.shape[2],
                       "count": 1, "dtype": mosaic.dtype, "crs": crs, "transform": transform,
                       "nodata": nodata, "compress": "lzw"}
            with rasterio.open(target / f"{layer}.tif", "w", **profile) as out:
                out.write(mosaic)
                out.set_band_description(1, layer)
                out.update_tags(1, units=tiles[0].tags(1).get("units", ""))
        finally:
            for tile in tiles:
                tile.close()


def stage_structures(spec: NativeSpec, entities: pd.DataFrame, target: Path) -> None:
    """Write the entities' structures as an SD file, each record titled from the title column.

    `spec.variables` = [structure (SMILES) column, title column]. Records are in the order of the
    structures' SMILES, so the file's order says nothing about the repository's keys; coordinates
    are RDKit's deterministic 2-D depiction.
    """
    from rdkit import Chem
    from rdkit.Chem import rdDepictor

    if len(spec.variables) != 2:
        raise NativeStagingError(f"sdf needs [structure column, title column], got {spec.variables}")
    structure, title = spec.variables
    missing = sorted({structure, title} - set(entities.columns))
    if missing:
        raise NativeStagingError(f"the entities table lacks {missing} to write structures from")
    with Chem.SDWriter(str(target)) as writer:
        for smiles, name in entities.sort_values([structure, title])[[structure, title]].itertuples(index=False):
            mol = Chem.MolFromSmiles(smiles)
            if mol is None:
                raise NativeStagingError(f"structure {name!r} does not parse: {smiles}")
            rdDepictor.Compute2DCoords(mol)
            mol.SetProp("_Name", str(name))
            writer.write(mol)


def stage_counts(spec: NativeSpec, source: Path, cells: list[str], target: Path) -> None:
    """Write the query's cells of a 10x matrix (v3 layout), features of the types `spec.variables`.

    Barcodes keep their GEM-well suffix and order; the root attributes (`library_ids`, ...) are
    the matrix's own, so relating a cell to its library is the agent's join.
    """
    import h5py

    from stages.sources.hdf.sparse import read_sparse_matrix
    from stages.sources.hdf.sparse_write import Counts, write_v3

    matrix = read_sparse_matrix(source)
    features = matrix.features
    unknown = sorted(set(spec.variables) - set(features["feature_type"]))
    if unknown:
        raise NativeStagingError(f"{source}: no features of type {unknown}")
    rows = np.flatnonzero(features["feature_type"].isin(spec.variables).to_numpy())
    wanted = set(cells)
    columns = np.array([i for i, barcode in enumerate(matrix.barcodes) if barcode in wanted], dtype=np.int64)
    if len(columns) != len(wanted):
        raise NativeStagingError(f"{source}: {len(wanted) - len(columns)} of the query's cells are not in the matrix")
    kept = features.iloc[rows]
    with h5py.File(source) as raw:
        attrs = dict(raw.attrs)
    write_v3(target, Counts(kept["feature_id"].tolist(), kept["name"].tolist(), kept["feature_type"].tolist(),
                            kept["genome"].fillna("").tolist(), matrix.barcodes[columns].tolist(),
                            matrix.to_scipy()[rows][:, columns].tocsc()), attrs)


def stage_native(specs: list[NativeSpec], repository: Path, entity_key: str, entities: list[str],
                 start: date, end: date, public: Path) -> list[str]:
    """Stage every native modality of a query into `public`; returns README lines describing them."""
    if not specs:
        return []
    inventory = read_table(repository, "native_files") if any(s.kind != "sdf" for s in specs) else None
    table = read_table(repository, "entities")
    table = table[table[entity_key].astype(str).isin(entities)]
    lines = []
    for spec in specs:
        target = public / spec.path
        if spec.kind == "netcdf_grid":
            stage_grid(spec, _files(inventory, "grid")[0], table, start, end, target)
            lines.append(f"- `{spec.path}`: NetCDF-4 (CF) grid, variables {', '.join(spec.variables)}, "
                         f"{start} to {end}; cells outside this query are fill.")
        elif spec.kind == "sdf":
            stage_structures(spec, table, target)
            lines.append(f"- `{spec.path}`: SD file (V2000) of the query's {len(table)} structures, "
                         "each record titled with the molecule's name.")
        elif spec.kind == "tenx_h5":
            stage_counts(spec, _files(inventory, "counts")[0], list(table[entity_key].astype(str)), target)
            lines.append(f"- `{spec.path}`: 10x Genomics feature-barcode matrix (Cell Ranger v3 HDF5) of the "
                         f"query's {len(table)} cells, features of type {', '.join(spec.variables)}.")
        elif spec.kind == "geotiff":
            stage_layers(spec, inventory, table, target)
            lines.append(f"- `{spec.path}/`: GeoTIFF layers {', '.join(spec.variables)} (one file each, "
                         "in the mosaic's own projection; see each file's CRS and transform).")
        else:
            raise NativeStagingError(f"native kind {spec.kind!r} is not staged yet")
    return lines

