"""10x matrices: the v2 genome-group layout and inconsistent CSC arrays, generated with h5py."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.sparse

from stages.repository import validate_table
from stages.sources import hdf
from stages.sources.hdf import Params, RawFormatError
from stages.tables import collect

# a 3-gene x 2-barcode genome: barcode AAAC-1 has gene B=5, gene A=2; barcode TTTG-1 has gene C=1
GENOME = {"barcodes": [b"AAAC-1", b"TTTG-1"], "data": [5, 2, 1], "indices": [1, 0, 2],
          "indptr": [0, 2, 3], "shape": [3, 2]}
GENES = {"genes": [b"G3", b"G1", b"G2"], "gene_names": [b"A", b"B", b"C"]}


def write_v2(path: Path, groups: dict[str, dict]) -> Path:
    with h5py.File(path, "w") as h5:
        h5.attrs.update({"CLASS": np.bytes_(b"GROUP"), "TITLE": np.bytes_(b""), "VERSION": np.bytes_(b"1.0")})
        for genome, members in groups.items():
            group = h5.create_group(genome)
            for name, values in members.items():
                dtype = {"data": np.int32, "shape": np.int32, "indices": np.int64, "indptr": np.int64}
                group.create_dataset(name, data=np.asarray(values, dtype=dtype.get(name)), track_times=False)
    return path


def write_v3(path: Path, **changes) -> Path:
    members = {**GENOME, "features/id": [b"G3", b"G1", b"G2"], "features/name": [b"A", b"B", b"C"],
               "features/feature_type": [b"Gene Expression"] * 3, "features/genome": [b"hg"] * 3}
    members.update(changes)
    with h5py.File(path, "w") as h5:
        h5.attrs["version"] = np.int64(2)
        for name, values in members.items():
            if values is not None:
                h5.create_dataset(f"matrix/{name}", data=np.asarray(values), track_times=False)
    return path


def problem(tmp_path: Path, path: Path) -> str:
    with pytest.raises(RawFormatError) as caught:
        collect(hdf.read(tmp_path, Params()))
    assert (caught.value.path, caught.value.line) == (str(path), None)
    return caught.value.problem


def test_small_v2_file_reads_exactly(tmp_path):
    write_v2(tmp_path / "filtered_gene_bc_matrices_h5.h5", {"hg19": {**GENOME, **GENES}})
    read = collect(hdf.read(tmp_path, Params()))
    for table in read.values():
        validate_table(table)
    counts = read["counts"].frame
    assert counts[["barcode", "feature_id", "count"]].values.tolist() == [
        ["AAAC-1", "G1", 5], ["AAAC-1", "G3", 2], ["TTTG-1", "G2", 1]]
    features = read["features"].frame
    assert features[["feature_id", "name", "feature_type", "genome"]].values.tolist() == [
        ["G1", "B", "Gene Expression", "hg19"], ["G2", "C", "Gene Expression", "hg19"],
        ["G3", "A", "Gene Expression", "hg19"]]


def test_seeded_two_genome_v2_file_joins_over_the_union_of_barcodes(tmp_path):
    rng = np.random.default_rng(3)
    groups, dense = {}, {}
    for genome, barcodes in (("hg19", ["AC-1", "GT-1", "TT-1"]), ("mm10", ["AC-1", "CC-1"])):
        counts = rng.poisson(1.0, (4, len(barcodes))).astype(np.int32)
        csc = scipy.sparse.csc_matrix(counts)
        groups[genome] = {"barcodes": [b.encode() for b in barcodes], "data": csc.data,
                          "indices": csc.indices, "indptr": csc.indptr, "shape": counts.shape,
                          "genes": [f"{genome}_{i}".encode() for i in range(4)],
                          "gene_names": [f"g{i}".encode() for i in range(4)]}
        dense[genome] = (barcodes, counts)
    path = write_v2(tmp_path / "barnyard.h5", groups)
    matrix = hdf.read_sparse_matrix(path)
    assert (matrix.layout, matrix.groups) == ("v2", ("/hg19", "/mm10"))
    assert matrix.barcodes.tolist() == ["AC-1", "GT-1", "TT-1", "CC-1"] and matrix.shape == (8, 4)
    counts = matrix.counts_frame().set_index(["barcode", "feature_id"])["count"]
    expected = {(barcode, f"{genome}_{row}"): value for genome, (barcodes, values) in dense.items()
                for row in range(4) for barcode, value in zip(barcodes, values[row], strict=True) if value}
    assert counts.to_dict() == expected


def test_v2_group_without_genes(tmp_path):
    path = write_v2(tmp_path / "v2.h5", {"hg19": {**GENOME, "gene_names": GENES["gene_names"]}})
    assert problem(tmp_path, path) == "group /hg19: missing required member 'genes'"


def test_v3_missing_dataset_and_dangling_feature_table(tmp_path):
    path = write_v3(tmp_path / "v3.h5", indptr=None)
    assert problem(tmp_path, path) == "group /matrix: missing required member 'indptr'"
    path = write_v3(tmp_path / "v3.h5", **{f"features/{k}": None for k in ("id", "name", "feature_type",
                                                                           "genome")})
    with h5py.File(path, "a") as h5:
        h5["matrix/features"] = h5py.SoftLink("/matrix/feature_table")
    assert problem(tmp_path, path) == ("group /matrix: /matrix/features is a dangling soft link to "
                                       "'/matrix/feature_table'")


@pytest.mark.parametrize(("changes", "expected"), [
    ({"indptr": [0, 3, 2]}, "indptr is not monotone: indptr[2]=2 < indptr[1]=3"),
    ({"indptr": [0, 2]}, "indptr has 2 entries, expected n_barcodes + 1 = 3"),
    ({"indptr": [1, 2, 3]}, "indptr[0] is 1, expected 0"),
    ({"indices": [1, 0, 3]}, "indices[2]=3 is outside [0, 3)"),
    ({"data": [5, 2]}, "indptr[-1]=3, len(indices)=3 and len(data)=2 must be equal"),
    ({"shape": [3, 3]}, "shape [3, 3] does not match 3 features x 2 barcodes"),
    ({"indices": [1, 1, 2]}, "duplicated entry for feature 'G1' in barcode 'AAAC-1' (indices[1])"),
    ({"data": [5, -2, 1]}, "data[1]=-2 is a negative count"),
    ({"data": [5.0, 2.5, 1.0]}, "data[1]=2.5 is not an integer count"),
    ({"data": [b"5", b"x", b"1"]}, "data has shape (3,) and dtype |S1, expected 1-D integer counts"),
])
def test_inconsistent_csc_arrays(tmp_path, changes, expected):
    path = write_v3(tmp_path / "v3.h5", **changes)
    assert problem(tmp_path, path) == f"group /matrix: {expected}"


def test_an_entry_is_duplicated_only_within_one_barcode(tmp_path):
    path = write_v3(tmp_path / "v3.h5", indices=[0, 1, 1])  # sorted columns; feature 1 in both barcodes
    assert hdf.read_sparse_matrix(path).counts_frame().values.tolist() == [
        ["AAAC-1", "G1", 2], ["AAAC-1", "G3", 5], ["TTTG-1", "G1", 1]]
    path = write_v3(tmp_path / "v3.h5", indices=[2, 0, 1], indptr=[0, 3, 3], data=[5, 2, 1])
    assert hdf.read_sparse_matrix(path).counts_frame()["count"].tolist() == [1, 5, 2]  # unsorted column
    path = write_v3(tmp_path / "v3.h5", indices=[2, 0, 2], indptr=[0, 3, 3], data=[5, 2, 1])
    assert problem(tmp_path, path) == ("group /matrix: duplicated entry for feature 'G2' in barcode 'AAAC-1' "
                                       "(indices[2])")


def test_duplicated_and_non_ascii_ids(tmp_path):
    path = write_v3(tmp_path / "v3.h5", barcodes=[b"AAAC-1", b"AAAC-1"])
    assert problem(tmp_path, path) == ("/matrix/barcodes: duplicated barcode 'AAAC-1' at index 1 "
                                       "(first at index 0)")
    path = write_v3(tmp_path / "v3.h5", **{"features/id": [b"G3", b"G\xc31", b"G2"]})
    assert problem(tmp_path, path) == "/matrix/features/id: entry 1 is not ASCII"
    path = write_v3(tmp_path / "v3.h5", **{"features/name": [b"A", b"B"]})
    assert problem(tmp_path, path) == ("group /matrix/features: feature columns differ in length "
                                       "{'id': 3, 'name': 2, 'feature_type': 3, 'genome': 3}")


def test_float_counts_with_integer_values_and_missing_genome_are_accepted(tmp_path):
    path = write_v3(tmp_path / "v3.h5", data=[5.0, 2.0, 1.0], **{"features/genome": None})
    matrix = hdf.read_sparse_matrix(path)
    assert matrix.data.tolist() == [5, 2, 1] and matrix.features["genome"].isna().all()


def test_file_without_a_matrix(tmp_path):
    with h5py.File(tmp_path / "plain.h5", "w") as h5:
        h5.create_dataset("matrix", data=np.eye(2), track_times=False)  # a dataset called matrix
    with pytest.raises(RawFormatError, match=r"group /: no 10x matrix"):
        hdf.read_sparse_matrix(tmp_path / "plain.h5")
    assert hdf.read_file(tmp_path / "plain.h5", Params()).frames.keys() == {"datasets"}


def test_genome_groups_must_not_share_feature_ids(tmp_path):
    path = write_v2(tmp_path / "v2.h5", {"hg19": {**GENOME, **GENES}, "mm10": {**GENOME, **GENES}})
    assert problem(tmp_path, path) == ("groups /hg19, /mm10: duplicated feature id 'G3' at index 3 "
                                       "(first at index 0)")


# --- the layout comes from the structure, never from the root `filetype` hint --------------------


def seeded_csc(seed: int, n_genes: int, barcodes: list[str]) -> dict:
    counts = np.random.default_rng(seed).poisson(1.0, (n_genes, len(barcodes))).astype(np.int32)
    csc = scipy.sparse.csc_matrix(counts)
    return {"barcodes": [b.encode() for b in barcodes], "data": csc.data, "indices": csc.indices,
            "indptr": csc.indptr, "shape": counts.shape, "dense": counts}


def test_cell_ranger_2_file_with_filetype_matrix_reads_as_genome_groups(tmp_path):
    members = seeded_csc(7, 5, ["AC-1", "GT-1", "TT-1"])
    dense = members.pop("dense")
    genes = {"genes": [f"ENSG{i:04d}".encode() for i in range(5)], "gene_names": [f"g{i}".encode() for i in range(5)]}
    path = write_v2(tmp_path / "filtered_gene_bc_matrices_h5.h5", {"GRCh38": {**members, **genes}})
    with h5py.File(path, "a") as h5:
        h5.attrs["filetype"] = "matrix"  # Cell Ranger 2 writes the same hint as Cell Ranger 3
    matrix = hdf.read_sparse_matrix(path)
    assert (matrix.layout, matrix.groups, matrix.shape) == ("v2", ("/GRCh38",), (5, 3))
    assert (matrix.to_scipy().toarray() == dense).all()
    assert set(collect(hdf.read(tmp_path, Params()))["features"].frame["genome"]) == {"GRCh38"}


@pytest.mark.parametrize("filetype", [None, "matrix", "not-a-matrix"])
def test_cell_ranger_3_layout_does_not_depend_on_the_filetype_attribute(tmp_path, filetype):
    path = write_v3(tmp_path / "v3.h5")
    if filetype is not None:
        with h5py.File(path, "a") as h5:
            h5.attrs["filetype"] = filetype
    matrix = hdf.read_sparse_matrix(path)
    assert (matrix.layout, matrix.groups, matrix.shape) == ("v3", ("/matrix",), (3, 2))


def test_filetype_matrix_without_either_layout_names_what_is_missing(tmp_path):
    path = tmp_path / "empty_matrix.h5"
    with h5py.File(path, "w") as h5:
        h5.attrs["filetype"] = np.bytes_(b"matrix")
        h5.create_dataset("counts", data=np.eye(2), track_times=False)
    assert problem(tmp_path, path) == (
        "group /: root attribute filetype='matrix' but no 10x matrix: neither a /matrix group with features"
        " (Cell Ranger 3) nor a genome group with barcodes, data, indices, indptr, shape, genes and"
        " gene_names (Cell Ranger 2)")


def test_group_with_csc_arrays_but_no_feature_table_names_both_layouts(tmp_path):
    path = write_v3(tmp_path / "v3.h5", **{f"features/{k}": None for k in ("id", "name", "feature_type",
                                                                           "genome")})
    assert problem(tmp_path, path) == (
        "group /matrix: not a 10x matrix: neither 'features' (Cell Ranger 3 /matrix layout) nor 'genes'"
        " and 'gene_names' (Cell Ranger 2 genome layout)")
    path = write_v2(tmp_path / "v3.h5", {"hg19": {"barcodes": GENOME["barcodes"], "indptr": GENOME["indptr"]}})
    assert problem(tmp_path, path) == (
        "group /hg19: not a 10x matrix: neither 'features' (Cell Ranger 3 /matrix layout) nor 'genes'"
        " and 'gene_names' (Cell Ranger 2 genome layout) (missing data, indices, shape)")
