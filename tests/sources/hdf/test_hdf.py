"""HDF source: the real 10x v3 file in ../shared/realdata, generic datasets, file-level bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from scibench_testing.realdata import REALDATA, requires_realdata

from stages.repository import validate_table
from stages.sources import hdf
from stages.sources.hdf import Params, RawFormatError
from stages.tables import collect

TENX = REALDATA / "hdf5_10x"
REAL_NAME = "10x_data/3.0.0/filtered_feature_bc_matrix.h5"
REAL_FILE = TENX / REAL_NAME
needs_real = requires_realdata("hdf5_10x", REAL_NAME)


def tables(raw_dir: Path, **params) -> dict[str, pd.DataFrame]:
    read = collect(hdf.read(raw_dir, Params(**params)))
    for table in read.values():
        validate_table(table)
    return {name: table.frame for name, table in read.items()}


def error_of(raw_dir: Path, **params) -> RawFormatError:
    with pytest.raises(RawFormatError) as caught:
        collect(hdf.read(raw_dir, Params(**params)))
    return caught.value


# --- the real 10x Genomics v3 file --------------------------------------------------------------


@needs_real
def test_real_v3_matrix_has_the_documented_size_and_values():
    matrix = hdf.read_sparse_matrix(REAL_FILE)
    assert (matrix.layout, matrix.groups, matrix.shape) == ("v3", ("/matrix",), (507, 1107))
    assert len(matrix.data) == 23866 and int(matrix.data.sum()) == 41549
    counts = matrix.counts_frame().set_index(["barcode", "feature_id"])["count"]
    assert counts.loc[("GATCACACACCCTGTT-1", "ENSG00000205581")] == 36  # HMGN1, read with h5py
    assert counts.loc[("AAACCCAAGGAGAGTA-1", "ENSG00000160255")] == 3  # first stored entry
    features = matrix.features.set_index("feature_id")
    assert features.loc["ENSG00000205581", "name"] == "HMGN1"
    assert set(features["genome"]) == {"GRCh38_chr21"}
    assert set(features["feature_type"]) == {"Gene Expression"}


@needs_real
def test_real_counts_equal_the_raw_csc_arrays():
    with h5py.File(REAL_FILE) as h5:
        m = h5["matrix"]
        dense = np.zeros(tuple(m["shape"][()]), dtype=np.int64)
        columns = np.repeat(np.arange(1107), np.diff(m["indptr"][()]))
        dense[m["indices"][()], columns] = m["data"][()]
        ids = m["features/id"][()].astype(str)
        barcodes = m["barcodes"][()].astype(str)
    counts = tables(TENX)["counts"]
    rows = pd.Index(ids).get_indexer(counts["feature_id"])
    cols = pd.Index(barcodes).get_indexer(counts["barcode"])
    assert (dense[rows, cols] == counts["count"].to_numpy()).all()
    assert (dense > 0).sum() == len(counts) == 23866


@needs_real
def test_read_the_real_folder_into_keyed_tables():
    read = tables(TENX, datasets=["/matrix/shape", "matrix/features/*"])
    assert len(read["features"]) == 507 and len(read["barcodes"]) == 1107
    assert len(read["counts"]) == 23866
    assert set(read["counts"]["file"]) == {REAL_NAME}
    assert read["features"]["feature_id"].is_unique and read["barcodes"]["barcode"].str.len().eq(18).all()
    datasets = read["datasets"].set_index("dataset")
    assert len(datasets) == 10
    assert datasets.loc["/matrix/data", ["ndim", "shape", "dtype"]].tolist() == [1, "23866", "int32"]
    assert datasets.loc["/matrix/barcodes", "dtype"] == "S18"
    assert read["vector_values"]["value"].tolist() == [507.0, 1107.0]  # strings skipped by the glob
    assert read["grid"].empty and read["cells"].empty and read["quarantine"].empty


@needs_real
def test_truncated_real_file(tmp_path):
    path = tmp_path / "cut.h5"
    path.write_bytes(REAL_FILE.read_bytes()[:60_000])
    error = error_of(tmp_path)
    assert (error.path, error.line) == (str(path), None)
    assert error.problem.startswith("unreadable HDF5 file (") and "truncated file" in error.problem


@needs_real
def test_crlf_conversion_of_a_binary_file_is_rejected(tmp_path):
    path = tmp_path / "converted.h5"
    path.write_bytes(REAL_FILE.read_bytes().replace(b"\n", b"\r\n"))
    error = error_of(tmp_path)
    assert error.path == str(path)
    assert error.problem == r"not an HDF5 or NetCDF file (no signature; starts with b'\x89HDF\r\r\n\x1a')"


@needs_real
def test_quarantine_keeps_the_good_files(tmp_path):
    shutil.copy(REAL_FILE, tmp_path / "good.h5")
    (tmp_path / "bad.h5").write_text("sample,count\nA,1\n")
    assert error_of(tmp_path).path == str(tmp_path / "bad.h5")
    read = tables(tmp_path, on_error="quarantine")
    assert read["quarantine"].to_dict("records") == [{
        "file": str(tmp_path / "bad.h5"), "line": -1, "column": None, "count": None,
        "problem": "not an HDF5 or NetCDF file (no signature; starts with b'sample,c')"}]
    assert set(read["counts"]["file"]) == set(read["datasets"]["file"]) == {"good.h5"}
    assert len(read["counts"]) == 23866


# --- generic datasets ----------------------------------------------------------------------------


def write_generic(path: Path) -> np.ndarray:
    rng = np.random.default_rng(7)
    matrix = rng.normal(20.0, 5.0, (3, 4)).round(2)
    matrix[1, 2] = -1.0
    with h5py.File(path, "w") as h5:
        field = h5.create_dataset("run/temperature", data=matrix, track_times=False)
        field.attrs.update({"units": "degC", "_FillValue": -1.0, "note": b"bench"})
        h5.create_dataset("run/steps", data=np.arange(5, dtype=np.int16), track_times=False)
        h5.create_dataset("run/labels", data=np.array([b"a", b"b"]), track_times=False)
        h5.create_dataset("run/cube", data=np.zeros((2, 2, 2)), track_times=False)
        h5["run/alias"] = h5py.SoftLink("/run/steps")
    return matrix


def test_datasets_are_listed_with_attributes(tmp_path):
    write_generic(tmp_path / "model.h5")
    listing = tables(tmp_path)["datasets"].set_index("dataset")
    assert listing.index.tolist() == ["/run/alias", "/run/cube", "/run/labels", "/run/steps",
                                      "/run/temperature"]
    assert listing.loc["/run/cube", ["ndim", "shape", "dtype"]].tolist() == [3, "2x2x2", "float64"]
    assert listing.loc["/run/temperature", "unit"] == "degC"
    assert listing.loc["/run/temperature", "attributes"] == (
        '{"_FillValue": -1.0, "note": "bench", "units": "degC"}')
    assert pd.isna(listing.loc["/run/steps", "unit"])


def test_requested_datasets_become_long_tables_with_fill_as_null(tmp_path):
    matrix = write_generic(tmp_path / "model.h5")
    read = tables(tmp_path, datasets=["/run/temperature", "run/st*"])
    values = read["matrix_values"]
    assert values[["row", "col"]].to_numpy().tolist()[:5] == [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0]]
    assert values["value"].isna().tolist() == [False] * 6 + [True] + [False] * 5
    assert values["value"].iloc[0] == matrix[0, 0] and set(values["unit"]) == {"degC"}
    vector = read["vector_values"]
    assert vector["dataset"].unique().tolist() == ["/run/steps"]
    assert vector["value"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_requests_that_cannot_be_met(tmp_path):
    write_generic(tmp_path / "model.h5")
    error = error_of(tmp_path, datasets=["/run/labels"])
    assert (error.path, error.problem) == (str(tmp_path / "model.h5"), "/run/labels: requested dataset "
                                           "is not a numeric 1-D or 2-D array (shape (2,), dtype S1)")
    error = error_of(tmp_path, datasets=["/run/pressure"])
    assert (error.path, error.problem) == (str(tmp_path), "no dataset matches '/run/pressure'")
    assert tables(tmp_path, datasets=["/run/c*"])["matrix_values"].empty  # a glob skips 3-D data


# --- file-level bad input ----------------------------------------------------------------------


def test_empty_file_and_text_file(tmp_path):
    (tmp_path / "empty.nc").write_bytes(b"")
    error = error_of(tmp_path)
    assert (error.path, error.line, error.problem) == (str(tmp_path / "empty.nc"), None, "file is empty")
    (tmp_path / "empty.nc").write_text("time,lat,lon,value\n")
    assert error_of(tmp_path).problem.startswith("not an HDF5 or NetCDF file")


def test_dangling_and_external_links_name_the_group(tmp_path):
    with h5py.File(tmp_path / "links.h5", "w") as h5:
        h5.create_group("run")
        h5["run/forcing"] = h5py.SoftLink("/inputs/forcing")
    error = error_of(tmp_path)
    assert error.problem == "group /run: /run/forcing is a dangling soft link to '/inputs/forcing'"
    with h5py.File(tmp_path / "links.h5", "w") as h5:
        h5["outside"] = h5py.ExternalLink("absent.h5", "/data")
    error = error_of(tmp_path)
    assert error.problem == "group /: /outside is an external link to absent.h5:/data that cannot be opened"


def test_folder_without_files(tmp_path):
    error = error_of(tmp_path)
    assert (error.path, error.problem) == (str(tmp_path), "no HDF5 or NetCDF files (.h5, .h5ad, .hdf5, "
                                           ".he5, .nc, .nc4)")
    assert tables(tmp_path, on_error="quarantine")["quarantine"]["file"].tolist() == [str(tmp_path)]


def test_params_reject_unknown_keys():
    with pytest.raises(ValidationError):
        Params(dataset=["/x"])
    with pytest.raises(ValidationError):
        Params(on_error="ignore")


@needs_real
@pytest.mark.parametrize("filetype", [None, "something else"])
def test_real_v3_layout_is_found_without_the_filetype_hint(tmp_path, filetype):
    path = tmp_path / "filtered_feature_bc_matrix.h5"
    shutil.copyfile(REAL_FILE, path)
    with h5py.File(path, "a") as h5:
        del h5.attrs["filetype"]
        if filetype is not None:
            h5.attrs["filetype"] = filetype
    matrix = hdf.read_sparse_matrix(path)
    assert (matrix.layout, matrix.groups, matrix.shape) == ("v3", ("/matrix",), (507, 1107))
