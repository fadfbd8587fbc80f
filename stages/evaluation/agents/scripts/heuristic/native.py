"""Per-entity values from files in their own formats: a NetCDF grid, GeoTIFF layers, structures.

What a data scientist does first with such a folder: put every modality on the entities.
- Grid (`*.nc`): each variable on (time, lat, lon) is averaged over time at the grid point nearest
  to the entity's centre; the column is the variable's name (`precip`, `tair`).
- Imagery (`*.tif` anywhere under `data/`): the entity's footprint (its lon/lat bounds, or a 0.05
  degree box around a point) is projected into the raster's CRS and rasterised (pixel centres
  inside); the valid pixels' mean and standard deviation become `<layer>_mean` and `<layer>_sd`.
- Structures (`*.sdf`): each record's standard InChIKey is matched to the entities' `inchikey`
  column; the structure's usual RDKit descriptors (molecular weight, Crippen logP, TPSA, donors,
  acceptors, rotatable bonds, rings, aromatic rings, heavy atoms, aromatic proportion, fraction
  of sp3 carbons) become columns.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

BOUNDS = ("lon_west_deg", "lat_south_deg", "lon_east_deg", "lat_north_deg")
POINT_HALF_WIDTH_DEG = 0.025


def centre_columns(entities: pd.DataFrame) -> tuple[str, str] | None:
    """The entity table's centre latitude and longitude columns (not its bounds)."""
    lat = [c for c in entities.columns if "lat" in c and c.endswith("_deg") and c not in BOUNDS]
    lon = [c for c in entities.columns if "lon" in c and c.endswith("_deg") and c not in BOUNDS]
    return (lat[0], lon[0]) if lat and lon else None


def grid_columns(path: Path, entities: pd.DataFrame) -> pd.DataFrame:
    """Time means of every (time, lat, lon) variable at each entity's nearest grid point."""
    import netCDF4

    lat_col, lon_col = centre_columns(entities)
    out = pd.DataFrame(index=entities.index)
    with netCDF4.Dataset(path) as grid:
        lat, lon = np.asarray(grid["lat"][:]), np.asarray(grid["lon"][:])
        rows = [int(np.argmin(np.abs(lat - v))) for v in entities[lat_col]]
        cols = [int(np.argmin(np.abs(lon - v))) for v in entities[lon_col]]
        for name, variable in grid.variables.items():
            if variable.dimensions[-2:] != ("lat", "lon") or len(variable.dimensions) != 3:
                continue
            values = np.ma.filled(variable[:].astype(float), np.nan)[:, rows, cols]
            out[name] = np.nanmean(values, axis=0)
    return out


def _footprint(entity: pd.Series, lat_col: str, lon_col: str) -> dict:
    if all(c in entity.index for c in BOUNDS):
        west, south, east, north = (float(entity[c]) for c in BOUNDS)
    else:
        lat, lon, half = float(entity[lat_col]), float(entity[lon_col]), POINT_HALF_WIDTH_DEG
        west, south, east, north = lon - half, lat - half, lon + half, lat + half
    ring = [(west, south), (east, south), (east, north), (west, north), (west, south)]
    return {"type": "Polygon", "coordinates": [ring]}


def layer_columns(path: Path, entities: pd.DataFrame) -> pd.DataFrame:
    """Mean and sd of each entity's valid pixels of one single-band GeoTIFF."""
    import rasterio
    from rasterio.features import geometry_mask
    from rasterio.warp import transform_geom

    lat_col, lon_col = centre_columns(entities)
    with rasterio.open(path) as image:
        values = image.read(1).astype(float)
        if image.nodata is not None:
            values[values == image.nodata] = np.nan
        means, sds = [], []
        for _, entity in entities.iterrows():
            shape = transform_geom("EPSG:4326", image.crs, _footprint(entity, lat_col, lon_col))
            inside = ~geometry_mask([shape], values.shape, image.transform)
            pixels = values[inside]
            pixels = pixels[np.isfinite(pixels)]
            means.append(float(pixels.mean()) if pixels.size else np.nan)
            sds.append(float(pixels.std()) if pixels.size else np.nan)
    return pd.DataFrame({f"{path.stem}_mean": means, f"{path.stem}_sd": sds}, index=entities.index)


def structure_columns(path: Path, entities: pd.DataFrame) -> pd.DataFrame:
    """RDKit descriptors of each entity's structure, matched through the standard InChIKey."""
    from rdkit import Chem, RDLogger
    from rdkit.Chem import Crippen, Descriptors, rdMolDescriptors

    RDLogger.DisableLog("rdApp.*")
    rows = {}
    for mol in Chem.SDMolSupplier(str(path)):
        if mol is None:
            continue
        heavy = mol.GetNumHeavyAtoms()
        rows[Chem.MolToInchiKey(mol)] = {
            "mol_wt": Descriptors.MolWt(mol), "logp": Crippen.MolLogP(mol),
            "tpsa": rdMolDescriptors.CalcTPSA(mol), "h_donors": rdMolDescriptors.CalcNumHBD(mol),
            "h_acceptors": rdMolDescriptors.CalcNumHBA(mol),
            "rotatable_bonds": rdMolDescriptors.CalcNumRotatableBonds(mol),
            "rings": rdMolDescriptors.CalcNumRings(mol),
            "aromatic_rings": rdMolDescriptors.CalcNumAromaticRings(mol), "heavy_atoms": heavy,
            "aromatic_proportion": sum(a.GetIsAromatic() for a in mol.GetAtoms()) / heavy if heavy else np.nan,
            "fraction_csp3": rdMolDescriptors.CalcFractionCSP3(mol)}
    table = pd.DataFrame.from_dict(rows, orient="index")
    return table.reindex(entities["inchikey"].astype(str).to_numpy()).set_axis(entities.index)


def native_attributes(data_dir: Path, entities: pd.DataFrame) -> pd.DataFrame:
    """Every native file's per-entity columns, joined on the entities' index (may be empty)."""
    parts = []
    if "inchikey" in entities.columns:
        parts += [structure_columns(path, entities) for path in sorted(data_dir.rglob("*.sdf"))]
    if centre_columns(entities) is not None:
        parts += [grid_columns(path, entities) for path in sorted(data_dir.rglob("*.nc"))]
        parts += [layer_columns(path, entities) for path in sorted(data_dir.rglob("*.tif"))]
    if parts:
        print(f"heuristic: native files give {[c for p in parts for c in p.columns]}", file=sys.stderr)
    return pd.concat(parts, axis=1) if parts else pd.DataFrame(index=entities.index)
