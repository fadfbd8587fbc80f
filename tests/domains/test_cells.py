"""The cells repository: one Cell Ranger aggregation, cells keyed by their suffixed barcode."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
from scibench_testing.domains import align_domain, synthesize_and_ingest

from stages.ingest import ingest
from stages.synthesize import hdf
from stages.synthesize.hdf import aggr

TINY = hdf.Params(n_lat=4, n_lon=4, n_days=10, n_features=100, n_barcodes=100)


def test_libraries_become_typed_columns_and_cells_carry_their_depth(tmp_path):
    raw = synthesize_and_ingest("hdf", TINY, tmp_path)
    tables = align_domain("cells", ["hdf"], tmp_path)
    libraries = tables["libraries"]
    assert libraries.columns.tolist() == ["gem_group", "age", "condition", "donor", "molecule_h5", "sample_id",
                                          "sex"]
    assert str(libraries["age"].dtype) == "float64" and str(libraries["donor"].dtype) == "string"
    aggregation = pd.read_csv(raw / aggr.AGGREGATION_FILE)
    assert libraries.sort_values("gem_group")["sample_id"].tolist() == aggregation["sample_id"].tolist()
    entities = tables["entities"]
    assert entities["cell_id"].is_unique and (entities["total_umis"] > 0).all()
    assert (entities["genes_detected"] <= entities["total_umis"]).all()
    manifest = tables["_manifest"]
    assert manifest["entity_key"] == "cell_id"
    native = tables["native_files"]
    assert native[["modality", "file"]].values.tolist() == [["counts", aggr.MATRIX_FILE]]


def test_two_aggregations_are_an_error_naming_both(tmp_path):
    raw = tmp_path / "raw" / "hdf"
    hdf.write(raw, TINY)
    shutil.copytree(raw / "cellranger_aggr", raw / "second_aggr")
    ingest("hdf", raw, {}, tmp_path / "sources" / "hdf")
    with pytest.raises(ValueError, match=r"cells joins one Cell Ranger aggregation; the hdf source holds 2: "
                                         r"\['cellranger_aggr/outs/count/filtered_feature_bc_matrix.h5', "
                                         r"'second_aggr/outs/count/filtered_feature_bc_matrix.h5'\]"):
        align_domain("cells", ["hdf"], tmp_path)
