"""A Cell Ranger aggregation's `aggregation.csv`, read beside its matrix and checked against it."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.sparse

from stages.sources import hdf as reader
from stages.sources.hdf.sparse_write import Counts, write_v3
from stages.tables import RawFormatError

CSV = "sample_id,molecule_h5,donor\nA_ctrl,/runs/a.h5,A\nB_stim,/runs/b.h5,B\n"


def aggregation(root: Path, csv_text: str = CSV, barcodes=("AAAC-1", "AAAC-2", "CCGT-2"),
                library_ids=(b"A_ctrl", b"B_stim")) -> Path:
    counts = Counts(["G1", "G2"], ["CD3E", "MX1"], ["Gene Expression"] * 2, ["GRCh38"] * 2, list(barcodes),
                    scipy.sparse.csc_matrix(np.array([[1, 0, 2], [0, 3, 1]], dtype=np.int32)))
    matrix = root / "agg/outs/count/filtered_feature_bc_matrix.h5"
    write_v3(matrix, counts, {"library_ids": np.array(library_ids)} if library_ids else None)
    if not library_ids:  # Cell Ranger before 3 wrote no such attribute
        with h5py.File(matrix, "a") as h5:
            del h5.attrs["library_ids"]
    (root / "agg/outs/aggregation.csv").write_text(csv_text)
    return root


def libraries(root: Path) -> dict:
    tables = {t.name: t for t in reader.read(root, reader.Params()) if hasattr(t, "frame")}
    frame = tables["libraries"].frame
    return {(int(r.gem_group), r.field): r.value for r in frame.itertuples(index=False)}


def test_rows_become_libraries_in_gem_well_order(tmp_path):
    found = libraries(aggregation(tmp_path))
    assert found == {(1, "sample_id"): "A_ctrl", (1, "molecule_h5"): "/runs/a.h5", (1, "donor"): "A",
                     (2, "sample_id"): "B_stim", (2, "molecule_h5"): "/runs/b.h5", (2, "donor"): "B"}


def test_a_matrix_outside_count_has_no_libraries(tmp_path):
    aggregation(tmp_path)
    (tmp_path / "agg/outs/count").rename(tmp_path / "agg/outs/elsewhere")
    tables = {t.name: t for t in reader.read(tmp_path, reader.Params()) if hasattr(t, "frame")}
    assert len(tables["libraries"].frame) == 0


@pytest.mark.parametrize(("kwargs", "where", "problem"), [
    ({"csv_text": CSV + "C,/runs/c.h5\n"}, "aggregation.csv:4", "2 fields where the header has 3"),
    ({"csv_text": "molecule_h5,donor\n/runs/a.h5,A\n"}, "aggregation.csv:1", "neither sample_id nor library_id"),
    ({"csv_text": CSV.replace("B_stim", "A_ctrl")}, "aggregation.csv:3", "sample_id 'A_ctrl' repeats line 2"),
    ({"library_ids": (b"B_stim", b"A_ctrl")}, "filtered_feature_bc_matrix.h5",
     "root attribute library_ids ['B_stim', 'A_ctrl'] disagrees"),
    ({"barcodes": ("AAAC-1", "AAAC-2", "CCGT-3")}, "filtered_feature_bc_matrix.h5",
     "barcode 'CCGT-3': its GEM-well suffix names no row of aggregation.csv (2 libraries)"),
])
def test_bad_aggregations_name_the_file_line_and_problem(tmp_path, kwargs, where, problem):
    aggregation(tmp_path, **kwargs)
    with pytest.raises(RawFormatError) as error:
        list(reader.read(tmp_path, reader.Params()))
    assert where in str(error.value) and problem in str(error.value)


def test_a_library_id_column_and_no_attribute_are_accepted(tmp_path):
    text = CSV.replace("sample_id", "library_id")
    found = libraries(aggregation(tmp_path, csv_text=text, library_ids=None))
    assert found[(2, "library_id")] == "B_stim"
