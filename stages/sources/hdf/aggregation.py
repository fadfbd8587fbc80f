"""The libraries of a Cell Ranger `aggr` matrix: `outs/aggregation.csv`, checked against the matrix.

`cellranger aggr` writes `outs/count/filtered_feature_bc_matrix.h5` and a copy of its input CSV as
`outs/aggregation.csv`: one row per library, its `sample_id` (`library_id` before Cell Ranger 3),
`molecule_h5` and any columns of the study's own (donor, condition, batch, ...). A barcode's
GEM-well suffix `-<n>` names the library in row n; the matrix's root attribute `library_ids`, when
present, lists the same ids in the same order. The table is long (`gem_group`, `field`, `value`,
every value a string as written), so aggregations with different columns share one schema.

Errors name the CSV and its line (a row with the wrong number of fields, an empty or repeated
sample id) or the matrix (a `library_ids` attribute that disagrees with the CSV, a barcode whose
suffix names no row).
"""

from __future__ import annotations

import csv
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from stages.tables import RawFormatError

FILE_NAME = "aggregation.csv"
ID_COLUMNS = ("sample_id", "library_id")


def aggregation_csv(matrix_path: Path) -> Path | None:
    """`outs/aggregation.csv` beside `outs/count/<matrix>.h5`, when the matrix is an aggregation's."""
    candidate = matrix_path.parent.parent / FILE_NAME
    return candidate if matrix_path.parent.name == "count" and candidate.is_file() else None


def read_libraries(csv_path: Path, matrix_path: Path, h5: h5py.File, barcodes: np.ndarray) -> pd.DataFrame:
    """The long `libraries` rows (gem_group, field, value) of one aggregation, checked."""
    with open(csv_path, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle))
    if not rows or not rows[0]:
        raise RawFormatError(csv_path, 1, "empty file: expected a header with sample_id and molecule_h5")
    header = [name.strip() for name in rows[0]]
    id_column = next((name for name in ID_COLUMNS if name in header), None)
    if id_column is None:
        raise RawFormatError(csv_path, 1, f"header has neither {' nor '.join(ID_COLUMNS)}: {header}")
    if len(set(header)) != len(header) or "" in header:
        raise RawFormatError(csv_path, 1, f"header has an empty or repeated column name: {header}")
    records, seen = [], {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(field.strip() for field in row):
            continue
        if len(row) != len(header):
            raise RawFormatError(csv_path, line, f"{len(row)} fields where the header has {len(header)}")
        record = dict(zip(header, (field.strip() for field in row), strict=True))
        sample = record[id_column]
        if not sample:
            raise RawFormatError(csv_path, line, f"empty {id_column}")
        if sample in seen:
            raise RawFormatError(csv_path, line, f"{id_column} {sample!r} repeats line {seen[sample]}")
        seen[sample] = line
        records.append(record)
    if "library_ids" in h5.attrs:
        listed = [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                  for v in np.atleast_1d(h5.attrs["library_ids"])]
        if listed != list(seen):
            raise RawFormatError(matrix_path, None, f"root attribute library_ids {listed} disagrees with "
                                 f"{csv_path.name}'s {id_column} column {list(seen)}")
    wells = pd.Series(barcodes, dtype="string").str.extract(r"-(\d+)$", expand=False)
    bad = wells.isna() | ~wells.fillna("0").astype(int).between(1, len(records))
    if bad.any():
        raise RawFormatError(matrix_path, None, f"barcode {barcodes[int(np.flatnonzero(bad)[0])]!r}: its "
                             f"GEM-well suffix names no row of {csv_path.name} ({len(records)} libraries)")
    return pd.DataFrame(
        [(well, field, value) for well, record in enumerate(records, start=1) for field, value in record.items()],
        columns=["gem_group", "field", "value"],
    ).astype({"gem_group": "int64", "field": "string", "value": "string"}).sort_values(
        ["gem_group", "field"], ignore_index=True)
