"""The `cells` repository: the cells of a Cell Ranger aggregation, with their library's metadata.

Joins the `hdf` source's aggregated 10x matrix (its `barcodes` and `counts`) with the aggregation's
`libraries` (the rows of `outs/aggregation.csv`): a barcode's GEM-well suffix `-<n>` names the
library in row n. Keys: `cell_id` (the barcode as the matrix writes it, suffix included) for
cells, `sample_id` for libraries. Tables:

- `entities` (cell_id): `gem_group`, the library's `sample_id` and every other column of the CSV
  (donor, condition, age, ...), and two depth figures of the cell's gene-expression features,
  `total_umis` and `genes_detected` (the agent-facing tasks stage neither: they are for slicing).
- `libraries` (sample_id): one row per library, `gem_group` and the CSV's columns. A column whose
  every value is a number becomes float64; the rest stay strings, as written.
- `native_files`: the aggregated matrix itself (modality `counts`), for tasks that stage it as
  HDF5 (`stages.construction.native`).

The repository has no time axis. Exactly one aggregation must be in the source; anything else is
an error naming the files.
"""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq

from stages.domains.native_files import counts_file, native_files_table
from stages.tables import Table

ENTITY_KEY = "cell_id"
LIBRARY_KEY = "sample_id"
SOURCE = "hdf"
ID_FIELDS = ("sample_id", "library_id")
GENE_EXPRESSION = "Gene Expression"


def align(inputs: dict) -> list[Table]:
    """Build `entities`, `libraries` and `native_files` from the hdf source's aggregation."""
    source = inputs[SOURCE]
    long = source["libraries"]
    files = sorted(set(long["file"]))
    if len(files) != 1:
        raise ValueError(f"cells joins one Cell Ranger aggregation; the hdf source holds {len(files)}: {files}")
    file = files[0]
    libraries, units = wide_libraries(file, long[long["file"] == file])
    barcodes = source["barcodes"]
    cells = pd.DataFrame({ENTITY_KEY: barcodes.loc[barcodes["file"] == file, "barcode"].astype("string")})
    cells["gem_group"] = cells[ENTITY_KEY].str.extract(r"-(\d+)$", expand=False).astype("int64")
    entities = cells.merge(libraries, on="gem_group", how="left", validate="many_to_one")
    entities = entities.merge(depth(source, file), on=ENTITY_KEY, how="left", validate="one_to_one")
    entities = entities.fillna({"total_umis": 0, "genes_detected": 0}).astype(
        {"total_umis": "int64", "genes_detected": "int64"}).sort_values(ENTITY_KEY, ignore_index=True)
    raw_dir = source.manifest["provenance"]["raw_dir"]
    return [
        Table("entities", entities, (ENTITY_KEY,),
              units | {"gem_group": "1", LIBRARY_KEY: "id", "total_umis": "UMI", "genes_detected": "genes"}),
        Table("libraries", libraries.sort_values(LIBRARY_KEY, ignore_index=True), (LIBRARY_KEY,),
              units | {"gem_group": "1"}),
        native_files_table([counts_file(raw_dir, file)]),
    ]


def wide_libraries(file: str, long: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """One row per library (`sample_id`, `gem_group`, the CSV's columns) and the columns' units."""
    frame = long.pivot(index="gem_group", columns="field", values="value").rename_axis(columns=None)
    id_field = next((f for f in ID_FIELDS if f in frame.columns), None)
    if id_field is None:
        raise ValueError(f"{file}: the aggregation's libraries have no sample_id or library_id")
    frame = frame.rename(columns={id_field: LIBRARY_KEY}).reset_index()
    units = {}
    for column in frame.columns.drop(["gem_group", LIBRARY_KEY]):
        numbers = pd.to_numeric(frame[column], errors="coerce")
        if numbers.notna().all():
            frame[column], units[column] = numbers.astype("float64"), "as written"
        else:
            frame[column], units[column] = frame[column].astype("string"), "as written"
    frame[LIBRARY_KEY] = frame[LIBRARY_KEY].astype("string")
    return frame.astype({"gem_group": "int64"}), units


def depth(source, file: str) -> pd.DataFrame:
    """Per cell: UMIs and detected genes over the gene-expression features (one read of `counts`)."""
    features = source["features"]
    genes = features.loc[(features["file"] == file) & (features["feature_type"] == GENE_EXPRESSION), "feature_id"]
    counts = pq.read_table(source.path("counts"), columns=["barcode", "feature_id", "count"],
                           filters=[("file", "=", file)]).to_pandas()
    counts = counts[counts["feature_id"].isin(set(genes)) & (counts["count"] > 0)]
    grouped = counts.groupby("barcode", sort=True)["count"].agg(total_umis="sum", genes_detected="size")
    grouped.index = grouped.index.astype("string")
    return grouped.rename_axis(ENTITY_KEY).reset_index()
