"""Fuzz the CAMELS-US reader with mutated real files: forcing, streamflow and attribute tables."""

from __future__ import annotations

import functools

from hypothesis import given
from hypothesis import strategies as st
from scibench_testing.fuzzing import FUZZ, check_reader, counted, head, mutated, raw_folder
from scibench_testing.realdata import realdata

from stages.sources import camels_us

ATTRIBUTE_GROUPS = ("name", "topo", "clim")


@functools.cache
def seed_files() -> dict[str, bytes]:
    """The real files of basin 01022500, cut to 20 days, and three rows of three attribute tables."""
    root = realdata("camels_us")
    forcing = "basin_mean_forcing/daymet/01/01022500_lump_cida_forcing_leap.txt"
    flow = "usgs_streamflow/01/01022500_streamflow_qc.txt"
    files = {forcing: head(root / forcing, 24), flow: head(root / flow, 20)}
    for group in ATTRIBUTE_GROUPS:
        name = f"camels_attributes_v2.0/camels_{group}.txt"
        files[name] = head(root / name, 4)
    return files


@FUZZ
@given(data=st.data())
@counted
def test_camels_us(data):
    files = dict(seed_files())
    name = data.draw(st.sampled_from(sorted(files)), label="file")
    files[name] = data.draw(mutated(files[name]), label="content")
    params = camels_us.Params(on_error=data.draw(st.sampled_from(["raise", "quarantine"]), label="on_error"))
    with raw_folder(files) as raw_dir:
        check_reader(lambda: camels_us.read(raw_dir, params), raw_dir, files)
