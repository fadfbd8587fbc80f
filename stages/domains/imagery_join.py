"""Join the imagery source to a domain's entities: zonal statistics of every mosaic layer per entity.

The aligners reach the rasters through the ingested inventory, never by listing a folder:
`processed/sources/imagery` has a `files` table (each GeoTIFF's path relative to the raw folder it
was read from, that folder, and the file's SHA-256) and a `rasters` table (each band's variable,
date, unit and grid). Every file of a labelled band is checked against its recorded SHA-256
before use, so a raster changed or removed since `ingest@imagery` raises `StaleImageryError`
naming the file instead of mixing unknown bytes into a repository. Relative raw folders resolve
against the working directory (the project root for DVC stages).

Each entity has a footprint (`Square` around a point, `LonLatBox` for a grid cell, or None
without a location); `imagery.mosaic.mosaic_zone_stats` merges its pixels over all tiles. Output:

- `image_stats` (entity keys, variable, date): dated layers, e.g. NDVI per acquisition;
- `image_static` (entity keys, variable): undated layers, e.g. relief;
- summary columns for `entities`: per static variable its zonal mean and std, per dated variable
  the mean, min and max over dates of the zonal means (dates without a valid pixel skipped), named
  ``<variable>_<stat>`` plus the unit suffix (``relief_mean_m``, ``ndvi_max``).

Every entity gets a row per layer. Outside the mosaic (or without a footprint) `pixel_count` is 0
and `valid_fraction` and the statistics are null; over nodata only (sea, clouds) `valid_fraction`
is 0 and the statistics are null.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stages.domains.columns import column_name
from stages.hashing import file_sha256
from stages.sources.imagery.mosaic import Footprint, Square, Tile, group_layers, mosaic_zone_stats
from stages.tables import Table

SOURCE = "imagery"
STAT_UNITS = {"band_unit": "1", "pixel_count": "px", "valid_count": "px", "valid_fraction": "1",
              "mean": "band_unit", "min": "band_unit", "max": "band_unit", "std": "band_unit"}
STATIC_SUMMARY = ("mean", "std")
DATED_SUMMARY = ("mean", "min", "max")


class StaleImageryError(ValueError):
    """A raster listed in the imagery inventory is missing or differs from its recorded SHA-256."""

    def __init__(self, path: Path, problem: str):
        self.path = str(path)
        super().__init__(f"{path}: {problem}")


@dataclass(frozen=True)
class ImageryJoin:
    """The image tables of a domain and summary columns aligned row by row with its entities."""

    tables: list[Table]
    summary: pd.DataFrame
    summary_units: dict[str, str]


def entity_imagery(imagery: dict, entities: pd.DataFrame, keys: list[str],
                   footprints: list[Footprint | None], prefix: str = "") -> ImageryJoin:
    """Zonal statistics of every imagery layer for each entity row.

    Args:
        imagery: the imagery source's tables as `stages.align` reads them (`files`, `rasters`).
        entities: the domain's entity rows.
        keys: the key columns of `entities`, which key the image tables too.
        footprints: one footprint (or None) per entity row, in the same order.
        prefix: put before the table names (``county_`` gives ``county_image_stats``).
    """
    if len(footprints) != len(entities):
        raise ValueError(f"{len(footprints)} footprints for {len(entities)} entities")
    layers = group_layers(_labelled_bands(imagery))
    ids = [f"{i:09d}" for i in range(len(entities))]
    stats = mosaic_zone_stats(layers, dict(zip(ids, footprints, strict=True)))
    stats = stats.rename(columns={"unit": "band_unit"})
    key_frame = entities[keys].reset_index(drop=True).set_axis(ids)
    stats = pd.concat([key_frame.loc[stats["entity"]].reset_index(drop=True), stats.drop(columns="entity")],
                      axis=1)
    dated, static = stats[stats["date"].notna()], stats[stats["date"].isna()].drop(columns="date")
    tables = [_table(f"{prefix}image_stats", dated, (*keys, "variable", "date")),
              _table(f"{prefix}image_static", static, (*keys, "variable"))]
    summary, units = _summary(entities[keys].reset_index(drop=True), keys, dated, static)
    return ImageryJoin(tables, summary, units)


def verified_path(raw_dir: Path, file: str, sha256: str) -> Path:
    """The raster's path after checking that its bytes are those the inventory recorded."""
    path = raw_dir / file
    if not path.is_file():
        raise StaleImageryError(path, "listed in the imagery inventory but missing; re-run ingest@imagery "
                                      "(and synthesize@imagery for synthetic tiles)")
    actual = file_sha256(path)
    if actual != sha256:
        raise StaleImageryError(path, f"SHA-256 {actual[:16]}... differs from the imagery inventory "
                                      f"({sha256[:16]}...): the raster changed after ingest@imagery; re-run it")
    return path


def _labelled_bands(imagery: dict) -> list[tuple]:
    """(variable, date, unit, Tile) of every labelled band, its file verified against the inventory."""
    if "files" not in imagery:
        raise StaleImageryError(Path("processed/sources") / SOURCE, "no `files` inventory table (the rasters' "
                                "paths and SHA-256s); re-run ingest@imagery")
    files = imagery["files"]
    raw_dirs = sorted(set(files["raw_dir"]))
    if len(raw_dirs) > 1:
        raise ValueError(f"the imagery inventory mixes raw folders {raw_dirs}; ingest one folder")
    checked = {row.file: verified_path(Path(row.raw_dir), row.file, row.sha256)
               for row in files.itertuples(index=False)}
    rasters = imagery["rasters"]
    bands = []
    for row in rasters[rasters["variable"].notna()].itertuples(index=False):
        if row.file not in checked:
            raise StaleImageryError(Path(raw_dirs[0] if raw_dirs else ".") / row.file,
                                    "in the imagery `rasters` table but not in its `files` inventory")
        bounds = (row.bounds_left, row.bounds_bottom, row.bounds_right, row.bounds_top)
        tile = Tile(checked[row.file], int(row.band), row.crs_wkt, bounds, max(row.res_x, row.res_y))
        date = None if pd.isna(row.date) else row.date
        bands.append((row.variable, date, None if pd.isna(row.band_unit) else row.band_unit, tile))
    return bands


def _table(name: str, frame: pd.DataFrame, keys: tuple[str, ...]) -> Table:
    frame = frame.sort_values(list(keys), kind="stable", ignore_index=True)
    return Table(name, frame, keys, {c: STAT_UNITS[c] for c in frame.columns if c in STAT_UNITS})


def _summary(keys_frame: pd.DataFrame, keys: list[str], dated: pd.DataFrame,
             static: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """Per-entity summary columns, in the entities' row order."""
    summary, units = keys_frame.copy(), {}
    parts = [(static, [(stat, stat, "mean") for stat in STATIC_SUMMARY]),  # one row per entity: its value
             (dated, [(stat, "mean", stat) for stat in DATED_SUMMARY])]  # over the dates' zonal means
    for frame, reductions in parts:
        for variable, rows in frame.groupby("variable", sort=True):
            unit = rows["band_unit"].dropna().iloc[0] if rows["band_unit"].notna().any() else "1"
            grouped = rows.groupby(keys, sort=False)
            for stat, source, how in reductions:
                column = column_name(f"{variable}_{stat}", unit)
                if column in units:
                    raise ValueError(f"imagery summary column {column} would be written twice")
                values = grouped[source].agg(how).rename(column).reset_index()
                summary = summary.merge(values, on=keys, how="left", validate="one_to_one")
                summary[column] = summary[column].astype("float64")
                units[column] = unit
    return summary, units


def square_footprints(lon: pd.Series, lat: pd.Series, side_m: pd.Series | float) -> list[Footprint | None]:
    """A `Square` per row; None where lon or lat is null; a null or non-positive side reads one pixel."""
    sides = pd.Series(side_m, index=lon.index, dtype="float64") if not isinstance(side_m, pd.Series) else side_m
    footprints: list[Footprint | None] = []
    for x, y, side in zip(lon.astype("float64"), lat.astype("float64"), sides.astype("float64"), strict=True):
        usable = pd.notna(x) and pd.notna(y)
        footprints.append(Square(float(x), float(y), float(side) if side > 0 else 0.0) if usable else None)
    return footprints
