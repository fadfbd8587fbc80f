"""The `native_files` table of a repository: the raw files its modalities come from, as published.

Multimodal hypothesis tasks stage a modality in the format people analyse it in (a NetCDF grid,
GeoTIFF layers) rather than as the joined tables of the repository, so the agent must do the
alignment itself (`stages.construction.native`). This table tells the staging where those files
are and what their bytes were when the repository was built: one row per file with its `modality`
(`grid`, `imagery`, `counts`), the `layer` it holds (`relief`, `ndvi_20200715`; empty for a grid), `raw_dir`,
`file` (relative to `raw_dir`) and `sha256`. Staging re-checks the hash, so a raw file changed after
the build is an error naming it, never a silent mismatch.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stages.hashing import file_sha256
from stages.tables import Table

COLUMNS = ["modality", "layer", "raw_dir", "file", "sha256"]


def grid_file(raw_dir: str, file: str) -> dict:
    """The inventory row of a gridded NetCDF/HDF5 file."""
    return _whole_file("grid", raw_dir, file)


def counts_file(raw_dir: str, file: str) -> dict:
    """The inventory row of a 10x count matrix (HDF5)."""
    return _whole_file("counts", raw_dir, file)


def _whole_file(modality: str, raw_dir: str, file: str) -> dict:
    return {"modality": modality, "layer": "", "raw_dir": raw_dir, "file": file,
            "sha256": file_sha256(Path(raw_dir) / file)}


def imagery_files(imagery: dict) -> list[dict]:
    """Inventory rows of the imagery source's labelled rasters (hashes from its own inventory)."""
    files = imagery["files"].set_index("file")
    rasters = imagery["rasters"]
    rows = []
    for row in rasters[rasters["variable"].notna()].drop_duplicates("file").itertuples(index=False):
        layer = row.variable if pd.isna(row.date) else f"{row.variable}_{pd.Timestamp(row.date):%Y%m%d}"
        entry = files.loc[row.file]
        rows.append({"modality": "imagery", "layer": layer, "raw_dir": entry["raw_dir"],
                     "file": row.file, "sha256": entry["sha256"]})
    return rows


def native_files_table(rows: list[dict]) -> Table:
    """The `native_files` table, sorted so the repository's bytes do not depend on read order."""
    frame = pd.DataFrame(rows, columns=COLUMNS).sort_values(["modality", "layer", "file"], ignore_index=True)
    return Table("native_files", frame.astype("string"), keys=("modality", "layer", "file"),
                 units={"raw_dir": "path", "sha256": "hex"})
