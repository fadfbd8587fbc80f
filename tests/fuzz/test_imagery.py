"""Fuzz the imagery reader: GeoTIFF bytes mutated, truncated or replaced by junk."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scibench_testing.fuzzing import FUZZ, check_reader, counted, mutated, raw_folder
from scibench_testing.imagery import write_raster
from scibench_testing.realdata import realdata

from stages.sources import imagery


@functools.cache
def seed_files() -> dict[str, bytes]:
    """The real float32 LAEA raster with nodata and a seeded 16 x 16 NDVI tile with a DATE tag."""
    with tempfile.TemporaryDirectory() as folder:
        values = np.random.default_rng(11).uniform(-0.2, 0.9, (16, 16)).astype(np.float32)
        values[3:5, 7:9] = -9999.0
        tile = write_raster(Path(folder, "r00c00_ndvi_20200715.tif"), values, nodata=-9999.0)
        real = realdata("geotiff_rasterio", "float_raster_with_nodata.tif")
        return {tile.name: tile.read_bytes(), real.name: real.read_bytes()}


@FUZZ
@given(data=st.data())
@counted
def test_imagery(data):
    name = data.draw(st.sampled_from(sorted(seed_files())), label="file")  # one file: GDAL/PROJ take ~0.2 s each
    files = {name: data.draw(mutated(seed_files()[name], text=False), label="content")}
    params = imagery.Params(on_error=data.draw(st.sampled_from(["raise", "quarantine"]), label="on_error"))
    with raw_folder(files) as raw_dir:
        check_reader(lambda: imagery.read(raw_dir, params), raw_dir)
