"""Fuzz the crops reader: mutated real CY-Bench files and synthetic Khaki et al. county-year files."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from scibench_testing.fuzzing import FUZZ, check_reader, counted, head, mutated, raw_folder
from scibench_testing.realdata import realdata

from stages.sources import crops
from stages.synthesize import crops as synthesize

CYBENCH = {"yield": 12, "soil": 5, "crop_calendar": 5, "meteo": 9, "fpar": 9, "ndvi": 9}  # source -> lines kept


@functools.cache
def cybench_files() -> dict[str, bytes]:
    """The first lines of the real Dutch maize files."""
    return {f"maize/NL/{source}_maize_NL.csv": head(realdata("cybench", "maize", "NL", f"{source}_maize_NL.csv"), n)
            for source, n in CYBENCH.items()}


@functools.cache
def khaki_files() -> dict[str, bytes]:
    """A synthetic Khaki wide file (header and 4 county-years) and its location lookup."""
    with tempfile.TemporaryDirectory() as folder:
        synthesize.write(Path(folder), synthesize.Params(seed=5, n_counties=2, first_year=2014, last_year=2015))
        return {path.relative_to(folder).as_posix(): head(path, 5) for path in sorted(Path(folder, "khaki").glob("*"))}


def read_mutated(data: st.DataObject, files: dict[str, bytes]) -> None:
    files = dict(files)
    name = data.draw(st.sampled_from(sorted(files)), label="file")
    files[name] = data.draw(mutated(files[name]), label="content")
    params = crops.Params(on_error=data.draw(st.sampled_from(["raise", "quarantine"]), label="on_error"),
                          fill_values=data.draw(st.sampled_from(["report", "error"]), label="fill_values"))
    with raw_folder(files) as raw_dir:
        check_reader(lambda: crops.read(raw_dir, params), raw_dir, files)


@FUZZ
@given(data=st.data())
@counted
def test_crops_cybench(data):
    read_mutated(data, cybench_files())


@FUZZ
@given(data=st.data())
@counted
def test_crops_khaki(data):
    read_mutated(data, khaki_files())
