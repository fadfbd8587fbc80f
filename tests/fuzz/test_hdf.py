"""Fuzz the HDF reader: HDF5/NetCDF bytes mutated, and 10x matrices built from arbitrary members."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import h5py
import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scibench_testing.fuzzing import FUZZ, check_reader, counted, mutated, raw_folder
from scibench_testing.realdata import realdata

from stages.sources import hdf
from stages.synthesize import hdf as synthesize


@functools.cache
def seed_files() -> dict[str, bytes]:
    """The real 10x v3 matrix, and synthetic Cell Ranger 2 and CF NetCDF-4 files."""
    with tempfile.TemporaryDirectory() as folder:
        synthesize.write(Path(folder), synthesize.Params(seed=5, n_lat=3, n_lon=4, n_days=5, n_features=6,
                                                         n_barcodes=4))
        files = {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(Path(folder).rglob("*"))
                 if path.suffix in (".h5", ".nc") and "cellranger_v3" not in path.parts}
    real = realdata("hdf5_10x", "10x_data", "3.0.0", "filtered_feature_bc_matrix.h5")
    return files | {"10x_v3/" + real.name: real.read_bytes()}


def hdf_params(data: st.DataObject) -> hdf.Params:
    return hdf.Params(on_error=data.draw(st.sampled_from(["raise", "quarantine"]), label="on_error"),
                      datasets=data.draw(st.sampled_from([[], ["matrix/shape"], ["*/indptr"]]), label="datasets"),
                      batch_rows=data.draw(st.sampled_from([3, 1 << 20]), label="batch_rows"))


@FUZZ
@given(data=st.data())
@counted
def test_hdf_bytes(data):
    name = data.draw(st.sampled_from(sorted(seed_files())), label="file")
    files = {name: data.draw(mutated(seed_files()[name], text=False), label="content")}
    params = hdf_params(data)
    with raw_folder(files) as raw_dir:
        check_reader(lambda: hdf.read(raw_dir, params), raw_dir)


STRINGS = st.lists(st.sampled_from([b"AAAC-1", b"TTTG-1", b"G1", b"G2", b"", b"\xc3", b"Gene Expression", b"hg"]),
                   max_size=4)
INTEGERS = st.lists(st.integers(-3, 6), max_size=5)
MEMBERS = {  # member -> what it may hold: a Cell Ranger 2 or 3 member, mostly the right kind, sometimes not
    "barcodes": STRINGS, "data": st.one_of(INTEGERS, st.lists(st.floats(-2, 4), max_size=5)),
    "indices": INTEGERS, "indptr": INTEGERS, "shape": st.lists(st.integers(-1, 5), max_size=3),
    "genes": STRINGS, "gene_names": STRINGS, "features/id": STRINGS, "features/name": STRINGS,
    "features/feature_type": STRINGS, "features/genome": STRINGS,
}


@FUZZ
@given(data=st.data())
@counted
def test_hdf_layout(data):
    group = data.draw(st.sampled_from(["matrix", "hg19", "GRCh38"]), label="group")
    members = data.draw(st.dictionaries(st.sampled_from(sorted(MEMBERS)), st.none(), min_size=1), label="members")
    filetype = data.draw(st.sampled_from([None, "matrix", b"matrix", 3]), label="filetype")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "matrix.h5")
        with h5py.File(path, "w") as h5:
            if filetype is not None:
                h5.attrs["filetype"] = filetype
            for member in sorted(members):
                values = data.draw(MEMBERS[member], label=member)
                h5.create_dataset(f"{group}/{member}", data=np.asarray(values), track_times=False)
        files = {"matrix.h5": path.read_bytes()}
    params = hdf_params(data)
    with raw_folder(files) as raw_dir:
        check_reader(lambda: hdf.read(raw_dir, params), raw_dir)
