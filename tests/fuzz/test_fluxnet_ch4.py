"""Fuzz the FLUXNET-CH4 reader: mutated real daily files, synthetic half-hourly, AmeriFlux BASE and META files."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from scibench_testing.fuzzing import FUZZ, check_reader, counted, head, mutated, raw_folder
from scibench_testing.realdata import realdata

from stages.sources import fluxnet_ch4
from stages.synthesize import fluxnet_ch4 as synthesize

DAILY = ("FLX_CA-SCB_FLUXNET-CH4_2014-2017_1-1/FLX_CA-SCB_FLUXNET-CH4_DD_2014-2017_1-1.csv",
         "FLX_BW-Gum_FLUXNET-CH4_2018-2018_1-1/FLX_BW-Gum_FLUXNET-CH4_DD_2018-2018_1-1.csv")
AMERIFLUX = "AMF_US-CRT_BASE_HH_2-5.csv"


@functools.cache
def daily_files() -> dict[str, bytes]:
    """Two real daily files: the header and the first 16 days."""
    return {name: head(realdata("fluxnet_ch4") / name, 17) for name in DAILY}


@functools.cache
def subdaily_files() -> dict[str, bytes]:
    """A synthetic site's META row and first 30 half-hours, and the real AmeriFlux BASE excerpt's first 30."""
    with tempfile.TemporaryDirectory() as folder:
        synthesize.write(Path(folder), synthesize.Params(seed=5, n_sites=1, first_year=2018, last_year=2018))
        files = {path.relative_to(folder).as_posix(): head(path, 31)
                 for path in sorted(Path(folder).rglob("*.csv")) if "_DD_" not in path.name}
    return files | {AMERIFLUX: head(realdata("ameriflux_base") / AMERIFLUX, 33)}


def read_mutated(data: st.DataObject, files: dict[str, bytes]) -> None:
    files = dict(files)
    name = data.draw(st.sampled_from(sorted(files)), label="file")
    files[name] = data.draw(mutated(files[name]), label="content")
    params = fluxnet_ch4.Params(on_error=data.draw(st.sampled_from(["raise", "quarantine"]), label="on_error"),
                                time_reference=data.draw(st.sampled_from(["utc", "local_standard"]), label="time"),
                                utc_offsets_h={"US-CRT": -5})
    with raw_folder(files) as raw_dir:
        check_reader(lambda: fluxnet_ch4.read(raw_dir, params), raw_dir, files)


@FUZZ
@given(data=st.data())
@counted
def test_fluxnet_ch4_daily(data):
    read_mutated(data, daily_files())


@FUZZ
@given(data=st.data())
@counted
def test_fluxnet_ch4_subdaily(data):
    read_mutated(data, subdaily_files())
