"""AnnData .h5ad files: X dense, CSR and CSC with obs/var indexes, written with h5py in anndata's layout."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.sparse

from stages.repository import validate_table
from stages.sources import hdf
from stages.sources.hdf import Params, RawFormatError
from stages.sources.hdf.sparse_write import write_v3
from stages.synthesize.hdf.tenx import simulate_v3
from stages.tables import collect

STRING = h5py.string_dtype("utf-8")
# 3 cells x 4 genes, labels deliberately out of sorted order; CCTG-1 has no count at all
OBS = ["GGTA-1", "AAAC-1", "CCTG-1"]
VAR = ["NKG7", "CD3E", "LYZ", "MS4A1"]
X = np.array([[0, 2, 0, 1],
              [3, 0, 0, 7],
              [0, 0, 0, 0]], dtype=np.float32)
COUNTS = [["AAAC-1", "MS4A1", 7], ["AAAC-1", "NKG7", 3], ["GGTA-1", "CD3E", 2], ["GGTA-1", "MS4A1", 1]]


def encoded(node: h5py.HLObject, kind: str, version: str = "0.2.0", **extra) -> None:
    node.attrs.update({"encoding-type": kind, "encoding-version": version, **extra})


def write_h5ad(path: Path, x, obs: list[str] = OBS, var: list[str] = VAR, encoding: str | None = None) -> Path:
    """A file laid out as anndata 0.8+ writes it (root, obs/var dataframes, X, empty mappings)."""
    with h5py.File(path, "w", track_order=True) as h5:
        encoded(h5, "anndata", "0.1.0")
        if scipy.sparse.issparse(x):
            group = h5.create_group("X")
            encoded(group, encoding or f"{x.format}_matrix", "0.1.0", shape=np.array(x.shape, dtype=np.int64))
            for name in ("data", "indices", "indptr"):
                group.create_dataset(name, data=getattr(x, name), track_times=False)
        else:
            encoded(h5.create_dataset("X", data=x, track_times=False), encoding or "array")
        for axis, labels in (("obs", obs), ("var", var)):
            frame = h5.create_group(axis)
            encoded(frame, "dataframe", **{"_index": "_index", "column-order": np.array([], dtype=STRING)})
            encoded(frame.create_dataset("_index", data=np.array(labels, dtype=object), dtype=STRING,
                                         track_times=False), "string-array")
        for mapping in ("layers", "obsm", "obsp", "uns", "varm", "varp"):
            encoded(h5.create_group(mapping), "dict", "0.1.0")
    return path


def read(raw_dir: Path, **params) -> dict:
    tables = collect(hdf.read(raw_dir, Params(**params)))
    for table in tables.values():
        validate_table(table)
    return {name: table.frame for name, table in tables.items()}


def problem(tmp_path: Path, path: Path) -> str:
    with pytest.raises(RawFormatError) as caught:
        collect(hdf.read(tmp_path, Params()))
    assert (caught.value.path, caught.value.line) == (str(path), None)
    return caught.value.problem


@pytest.mark.parametrize("layout", ["csr", "csc", "dense"])
def test_x_with_obs_and_var_indexes_reads_as_barcodes_features_and_counts(tmp_path, layout):
    x = {"csr": scipy.sparse.csr_matrix(X), "csc": scipy.sparse.csc_matrix(X), "dense": X}[layout]
    write_h5ad(tmp_path / f"pbmc_{layout}.h5ad", x)
    tables = read(tmp_path)
    assert tables["counts"].values.tolist() == [[f"pbmc_{layout}.h5ad", *row] for row in COUNTS]
    assert tables["barcodes"]["barcode"].tolist() == ["AAAC-1", "CCTG-1", "GGTA-1"]
    features = tables["features"]
    assert features["feature_id"].tolist() == ["CD3E", "LYZ", "MS4A1", "NKG7"]
    assert features[["name", "feature_type", "genome"]].isna().all().all()  # var has no fixed columns for them
    assert tables["counts"]["count"].dtype == np.int64
    assert "/obs/_index" in set(tables["datasets"]["dataset"])


def test_seeded_csr_csc_and_dense_files_give_the_same_counts(tmp_path):
    counts = np.random.default_rng(11).poisson(0.6, (40, 25)).astype(np.int32)
    obs, var = [f"cell{i:02d}-1" for i in range(40)], [f"ENSG{j:05d}" for j in range(25)]
    for name, x in (("a_csr", scipy.sparse.csr_matrix(counts)), ("b_csc", scipy.sparse.csc_matrix(counts)),
                    ("c_dense", counts)):
        write_h5ad(tmp_path / f"{name}.h5ad", x, obs, var)
    frame = read(tmp_path)["counts"]
    expected = sorted([obs[i], var[j], int(counts[i, j])] for i, j in zip(*np.nonzero(counts), strict=True))
    for name in ("a_csr", "b_csc", "c_dense"):
        rows = frame[frame["file"] == f"{name}.h5ad"][["barcode", "feature_id", "count"]].values.tolist()
        assert rows == expected


def test_an_h5ad_beside_10x_files_leaves_their_tables_as_they_were(tmp_path):
    write_v3(tmp_path / "filtered_feature_bc_matrix.h5", simulate_v3(np.random.default_rng(5), 30, 12))
    alone = read(tmp_path)
    write_h5ad(tmp_path / "pbmc.h5ad", scipy.sparse.csr_matrix(X))
    both = read(tmp_path)
    for table in ("counts", "features", "barcodes", "datasets"):
        tenx = both[table][both[table]["file"] == "filtered_feature_bc_matrix.h5"].reset_index(drop=True)
        assert tenx.equals(alone[table])


@pytest.mark.parametrize(("change", "expected"), [
    (lambda h5: h5["X/data"].__setitem__(slice(None), [2.0, 1.5, 3.0, 7.0]),
     "group /X: data[1]=1.5 is not an integer count"),
    (lambda h5: h5["X"].attrs.__setitem__("shape", np.array([3, 5])),
     "group /X: shape attribute [3, 5]; expected [3, 4] (3 obs x 4 var)"),
    (lambda h5: h5["X"].attrs.__delitem__("shape"), "group /X: no shape attribute; expected [3, 4] (3 obs x 4 var)"),
    (lambda h5: h5["X"].attrs.__setitem__("encoding-type", "coo_matrix"),
     "/X: a group with encoding-type 'coo_matrix'; expected a dense array or a group with encoding-type"
     " 'csr_matrix' or 'csc_matrix'"),
    (lambda h5: h5["X"].__delitem__("indptr"), "group /X: missing required member 'indptr'"),
    (lambda h5: h5.__delitem__("X"), "group /: missing required member 'X'"),
    (lambda h5: h5["var"].attrs.__delitem__("_index"), "/var: dataframe has no '_index' attribute naming its index"),
    (lambda h5: h5["obs"].attrs.__setitem__("encoding-type", "dict"),
     "/obs: a group with encoding-type 'dict'; expected a dataframe group (encoding-type 'dataframe',"
     " anndata >= 0.8)"),
    (lambda h5: h5["obs/_index"].__setitem__(2, "GGTA-1"),
     "/obs/_index: duplicated obs name 'GGTA-1' at index 2 (first at index 0)"),
])
def test_malformed_csr_file_is_refused_naming_file_and_path(tmp_path, change, expected):
    path = write_h5ad(tmp_path / "pbmc.h5ad", scipy.sparse.csr_matrix(X))
    with h5py.File(path, "a") as h5:
        change(h5)
    assert problem(tmp_path, path) == expected


def test_malformed_csc_and_dense_files(tmp_path):
    path = write_h5ad(tmp_path / "pbmc.h5ad", scipy.sparse.csc_matrix(X))
    with h5py.File(path, "a") as h5:
        del h5["X/indptr"]
        h5["X/indptr"] = np.array([0, 1, 2, 4])  # over var: 4 genes need 5 entries
    assert problem(tmp_path, path) == "group /X: indptr has 4 entries, expected n_var + 1 = 5"
    path = write_h5ad(tmp_path / "pbmc.h5ad", scipy.sparse.csc_matrix(X))
    with h5py.File(path, "a") as h5:
        h5["X/indices"][3] = 0  # gene MS4A1's two entries both in cell GGTA-1
    assert problem(tmp_path, path) == "group /X: duplicated entry for cell 'GGTA-1' in feature 'MS4A1' (indices[3])"
    write_h5ad(path, np.array([[b"a"] * 4] * 3))
    assert problem(tmp_path, path) == ("/X: dense array of shape (3, 4) and dtype |S1; expected numeric counts of"
                                       " shape (3, 4) (obs x var)")
    write_h5ad(path, X[:, :3])
    assert problem(tmp_path, path) == ("/X: dense array of shape (3, 3) and dtype float32; expected numeric"
                                       " counts of shape (3, 4) (obs x var)")
    write_h5ad(path, np.log1p(X))  # a normalised X: not counts
    assert problem(tmp_path, path) == ("/X[0, 1]=1.0986123085021973 is not a count (a finite, non-negative"
                                       " integer)")


def test_a_bad_h5ad_is_quarantined_and_the_good_one_kept(tmp_path):
    write_h5ad(tmp_path / "good.h5ad", scipy.sparse.csr_matrix(X))
    bad = write_h5ad(tmp_path / "normalised.h5ad", scipy.sparse.csr_matrix(X / 3))
    tables = read(tmp_path, on_error="quarantine")
    assert set(tables["counts"]["file"]) == {"good.h5ad"}
    assert tables["quarantine"][["file", "problem"]].values.tolist() == [
        [str(bad), "group /X: data[0]=0.6666666865348816 is not an integer count"]]


def test_the_root_tag_not_the_suffix_picks_the_layout(tmp_path):
    path = write_h5ad(tmp_path / "pbmc.h5", scipy.sparse.csr_matrix(X))  # an AnnData file named .h5
    assert read(tmp_path)["counts"]["count"].tolist() == [7, 3, 2, 1]
    with h5py.File(path, "a") as h5:
        del h5.attrs["encoding-type"]  # untagged: its X group is taken for a broken 10x matrix
    assert problem(tmp_path, path).startswith("group /X: not a 10x matrix")
