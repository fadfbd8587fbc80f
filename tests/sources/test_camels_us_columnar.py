"""The columnar CAMELS-US path must give exactly what the line-exact path gives, or step aside."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from scibench_testing.realdata import REALDATA, requires_realdata

from stages.sources import camels_us
from stages.sources.camels_us_columnar import (
    IrregularChunk,
    basin_by_basin_chunk,
    bulk_chunk,
    normalised,
    read_chunk,
)
from stages.synthesize import camels_us as camels_synth

CAMELS = REALDATA / "camels_us"
needs_real = requires_realdata("camels_us")
HEADER = ("  44.82\n 133.00\n 587675987\n"
          "Year Mnth Day Hr dayl(s) prcp(mm/day) srad(W/m2) swe(mm) tmax(C) tmin(C) vp(Pa)\n")
FORCING = "2000 01 {:02d} 12\t31185.97\t0.00\t189.56\t0.00\t-2.36\t-14.36\t202.51\n"
FLOW = {True: "01022500 2000 01 {:02d}  -999.00 M\n", False: "01022500 2000 01 {:02d}   255.00 A\n"}


def files_of(raw: Path, product: str = "daymet"):
    return camels_us.basin_files(raw, camels_us.Params(forcing=product), [])


@needs_real
@pytest.mark.parametrize("product", ["daymet", "maurer", "nldas", "maurer_extended"])
def test_bulk_and_line_exact_paths_agree_on_every_real_product(product):
    files = files_of(CAMELS, product)
    bulk = bulk_chunk(files, thorough=False)
    exact = basin_by_basin_chunk(files, quarantine=False)
    assert bulk.daily.equals(exact.daily)
    assert bulk.headers == exact.headers
    assert bulk.daily.num_rows == 1461 + 3 * 1096 if product == "daymet" else 4 * 1096


def test_bulk_path_takes_synthetic_files_as_written(tmp_path):
    camels_synth.write(tmp_path, camels_synth.Params(n_basins=3, first_year=2001, last_year=2001))
    files = files_of(tmp_path)
    bulk = bulk_chunk(files, thorough=False)
    assert bulk.daily.equals(basin_by_basin_chunk(files, quarantine=False).daily)
    assert bulk.daily.num_rows == 3 * 365
    assert bulk.daily.column("qobs_cfs").null_count == bulk.daily.column("qobs_flag").to_pylist().count("M")


def test_normalised_collapses_whitespace_and_counts_rows():
    text = b" 1\t 2  3 \r\n\n4 5 6"
    assert normalised(text) == (b"1 2 3\n4 5 6\n", 2)
    assert normalised(text, thorough=False) == (b" 1 2 3 \n\n4 5 6\n", 3)  # left for Arrow to refuse
    assert normalised(b"1  2\n", thorough=False, collapse=False) == (b"1  2\n", 1)


def write_basin(root: Path, forcing_days, flow_days, line_end: str = "\n") -> None:
    forcing = root / "basin_mean_forcing/daymet/01/01022500_lump_cida_forcing_leap.txt"
    flow = root / "usgs_streamflow/01/01022500_streamflow_qc.txt"
    forcing.parent.mkdir(parents=True)
    flow.parent.mkdir(parents=True)
    forcing.write_text((HEADER + "".join(FORCING.format(d) for d in forcing_days)).replace("\n", line_end))
    flow.write_text("".join(FLOW[d == 3].format(d) for d in flow_days).replace("\n", line_end))


def test_crlf_files_fail_the_quick_try_and_pass_the_thorough_one(tmp_path):
    write_basin(tmp_path / "crlf", [1, 2], [1, 2], line_end="\r\n")
    write_basin(tmp_path / "lf", [1, 2], [1, 2])
    crlf = files_of(tmp_path / "crlf")
    with pytest.raises((IrregularChunk, pa.ArrowInvalid)):
        bulk_chunk(crlf, thorough=False)
    assert bulk_chunk(crlf, thorough=True).daily.equals(bulk_chunk(files_of(tmp_path / "lf"), thorough=False).daily)


def test_days_only_one_record_has_get_nulls_in_the_other_columns(tmp_path):
    write_basin(tmp_path, forcing_days=[1, 2, 3], flow_days=[2, 3, 4])
    files = files_of(tmp_path)
    daily = read_chunk(files, quarantine=False).daily
    assert daily.equals(basin_by_basin_chunk(files, quarantine=False).daily)
    rows = daily.select(["date", "prcp_mm_d", "qobs_cfs", "qobs_flag"]).to_pylist()
    assert [tuple(r.values()) for r in rows] == [
        (dt.date(2000, 1, 1), 0.0, None, None),
        (dt.date(2000, 1, 2), 0.0, 255.0, "A"),
        (dt.date(2000, 1, 3), 0.0, None, "M"),
        (dt.date(2000, 1, 4), None, 255.0, "A"),
    ]


def test_a_bad_file_in_a_chunk_is_reported_by_the_line_exact_parser(tmp_path):
    camels_synth.write(tmp_path, camels_synth.Params(n_basins=3, first_year=2001, last_year=2001))
    files = files_of(tmp_path)
    lines = files[1].streamflow.read_text().splitlines(keepends=True)
    lines[9] = lines[9].replace(" A", " A extra")
    files[1].streamflow.write_text("".join(lines))
    with pytest.raises(camels_us.RawFormatError) as caught:
        read_chunk(files, quarantine=False)
    assert (caught.value.path, caught.value.line) == (str(files[1].streamflow), 10)
    assert caught.value.problem == "expected 6 fields, found 7"
    kept = read_chunk(files, quarantine=True)
    assert [e.path for e in kept.errors] == [str(files[1].streamflow)]
    assert sorted(set(kept.daily.column("gauge_id").to_pylist())) == [files[0].basin, files[2].basin]
