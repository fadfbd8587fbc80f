"""CAMELS-US `read` over many basins at once: line ends, unmatched days, bad files among good ones.

`read` parses `CHUNK_BASINS` basins per Arrow call and, when a chunk fails a check, reads it again
basin by basin; these tests hold it to what reading each file on its own gives.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import pandas as pd
import pytest
from scibench_testing.realdata import REALDATA, requires_realdata

from stages.sources import camels_us
from stages.sources.camels_us import Params, RawFormatError
from stages.synthesize import camels_us as camels_synth
from stages.tables import collect

CAMELS = REALDATA / "camels_us"
needs_real = requires_realdata("camels_us")
HEADER = ("  44.82\n 133.00\n 587675987\n"
          "Year Mnth Day Hr dayl(s) prcp(mm/day) srad(W/m2) swe(mm) tmax(C) tmin(C) vp(Pa)\n")
FORCING = "2000 01 {:02d} 12\t31185.97\t0.00\t189.56\t0.00\t-2.36\t-14.36\t202.51\n"
FLOW = {True: "01022500 2000 01 {:02d}  -999.00 M\n", False: "01022500 2000 01 {:02d}   255.00 A\n"}
ATTRIBUTES = {"name": "gauge_id;huc_02;gauge_name\n01022500;01;Narraguagus River\n",
              "topo": "gauge_id;area_gages2\n01022500;573.6\n"}
RECORDED = {  # product: rows, null discharges, sha256 of the daily frame as CSV (recorded before the rewrite)
    "daymet": (4749, 365, "f925dd6fd6cf84051511ceee8aca39d8c513dc777dee16eba27c4c62ecebfd2e"),
    "maurer": (4384, 0, "2fd9702b34382a61b97b5030eb8e1fa5374ddc950cb0233bc59d52af0f68d971"),
    "nldas": (4384, 0, "750cb973e408bd01748fdf38d174aa36363d10150b2ef2c42820d7678b7223cd"),
    "maurer_extended": (4384, 0, "6a420dd657fb84453118d4a143e561847dce2b19171d41637dbfaf53464c0630"),
}


def daily(raw: Path) -> list[tuple]:
    """(gauge, date, precipitation, discharge, flag) of every `daily` row, None where null."""
    frame = collect(camels_us.read(raw, Params()))["daily"].frame
    rows = frame[["gauge_id", "date", "prcp_mm_d", "qobs_cfs", "qobs_flag"]].itertuples(index=False)
    return [tuple(None if pd.isna(value) else value for value in row) for row in rows]


def write_basin(root: Path, forcing_days, flow_days, line_end: str = "\n") -> None:
    forcing = root / "basin_mean_forcing/daymet/01/01022500_lump_cida_forcing_leap.txt"
    flow = root / "usgs_streamflow/01/01022500_streamflow_qc.txt"
    for path in (forcing, flow):
        path.parent.mkdir(parents=True)
    forcing.write_bytes((HEADER + "".join(FORCING.format(d) for d in forcing_days)).replace("\n", line_end).encode())
    flow.write_bytes("".join(FLOW[d == 3].format(d) for d in flow_days).replace("\n", line_end).encode())
    for group, text in ATTRIBUTES.items():
        path = root / f"camels_attributes_v2.0/camels_{group}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)


@needs_real
@pytest.mark.parametrize("product", list(RECORDED))
def test_every_real_product_reads_as_recorded(product):
    frame = collect(camels_us.read(CAMELS, Params(forcing=product)))["daily"].frame
    digest = hashlib.sha256(frame.to_csv(index=False).encode()).hexdigest()
    assert (len(frame), int(frame["qobs_cfs"].isna().sum()), digest) == RECORDED[product]


@pytest.mark.parametrize("line_end", ["\r\n", "\r"])
def test_crlf_and_cr_files_read_like_lf_files(tmp_path, line_end):
    write_basin(tmp_path / "lf", [1, 2], [1, 2])
    write_basin(tmp_path / "other", [1, 2], [1, 2], line_end=line_end)
    expected = [("01022500", dt.date(2000, 1, 1), 0.0, 255.0, "A"), ("01022500", dt.date(2000, 1, 2), 0.0, 255.0, "A")]
    assert daily(tmp_path / "lf") == expected
    assert daily(tmp_path / "other") == expected


def test_days_only_one_record_has_get_nulls_in_the_other_columns(tmp_path):
    write_basin(tmp_path, forcing_days=[1, 2, 3], flow_days=[2, 3, 4])
    assert daily(tmp_path) == [
        ("01022500", dt.date(2000, 1, 1), 0.0, None, None),
        ("01022500", dt.date(2000, 1, 2), 0.0, 255.0, "A"),
        ("01022500", dt.date(2000, 1, 3), 0.0, None, "M"),
        ("01022500", dt.date(2000, 1, 4), None, 255.0, "A"),
    ]


def test_a_bad_file_among_many_is_named_with_its_line(tmp_path):
    camels_synth.write(tmp_path, camels_synth.Params(n_basins=20, first_year=2001, last_year=2001))
    forcings = sorted(tmp_path.glob("basin_mean_forcing/daymet/*/*.txt"))
    gauges = [path.name[:8] for path in forcings]
    flow = next(tmp_path.glob(f"usgs_streamflow/*/{gauges[17]}_streamflow_qc.txt"))  # second chunk of 16
    lines = flow.read_text().splitlines(keepends=True)
    lines[9] = lines[9].replace("\n", " extra\n")
    flow.write_text("".join(lines))
    lines = forcings[3].read_text().splitlines()
    fields = lines[40].split("\t")
    lines[40] = "\t".join([fields[0], "-9999", *fields[2:]])  # line 41: a missing-value code as dayl(s)
    forcings[3].write_text("\n".join(lines) + "\n")
    with pytest.raises(RawFormatError) as caught:
        collect(camels_us.read(tmp_path, Params()))
    assert (caught.value.path, caught.value.line) == (str(forcings[3]), 41)
    assert caught.value.problem == "unexpected sentinel -9999 in column dayl_s (forcings are gap-free)"
    tables = collect(camels_us.read(tmp_path, Params(on_error="quarantine")))
    assert tables["quarantine"].frame[["file", "line", "problem"]].values.tolist() == [
        [str(forcings[3]), 41, "unexpected sentinel -9999 in column dayl_s (forcings are gap-free)"],
        [str(flow), 10, "expected 6 fields, found 7"]]
    kept = sorted(set(gauges) - {gauges[3], gauges[17]})
    assert tables["daily"].frame["gauge_id"].unique().tolist() == kept
    assert len(tables["daily"].frame) == 18 * 365
    headers = tables["attributes"].frame.set_index("gauge_id")["header_area_m2"]
    assert headers.isna().sum() == 2 and headers[[gauges[3], gauges[17]]].isna().all()


def test_basins_whose_columns_come_in_another_order_read_alike(tmp_path):
    camels_synth.write(tmp_path, camels_synth.Params(n_basins=3, first_year=2001, last_year=2001))
    expected = collect(camels_us.read(tmp_path, Params()))["daily"].frame
    path = sorted(tmp_path.glob("basin_mean_forcing/daymet/*/*.txt"))[1]
    lines = path.read_text().splitlines()
    swapped = [lines[3].replace("tmax(C) tmin(C)", "tmin(C) tmax(C)")]
    for line in lines[4:]:
        fields = line.split("\t")
        swapped.append("\t".join([*fields[:5], fields[6], fields[5], *fields[7:]]))
    path.write_text("\n".join(lines[:3] + swapped) + "\n")
    assert collect(camels_us.read(tmp_path, Params()))["daily"].frame.equals(expected)


def test_hexadecimal_integers_are_refused_though_arrow_reads_them(tmp_path):
    write_basin(tmp_path, [1, 2], [1, 2])
    path = next(tmp_path.glob("basin_mean_forcing/daymet/*/*.txt"))
    path.write_text(path.read_text().replace("2000 01 02 12", "2000 0x1 02 12"))
    with pytest.raises(RawFormatError) as caught:
        collect(camels_us.read(tmp_path, Params()))
    assert (caught.value.line, caught.value.problem) == (6, "value '0x1' in month is not an integer")


def test_a_header_longer_than_the_first_read_of_a_file_is_read_whole(tmp_path):
    write_basin(tmp_path, [1, 2], [1, 2])
    path = next(tmp_path.glob("basin_mean_forcing/daymet/*/*.txt"))
    lines = path.read_text().split("\n")
    lines[3] = " " * 5000 + lines[3]  # the column names start past the first 4 KB
    path.write_text("\n".join(lines))
    tables = collect(camels_us.read(tmp_path, Params()))
    header = tables["attributes"].frame[["gauge_id", "header_lat_deg", "header_elev_m", "header_area_m2"]]
    assert header.values.tolist() == [["01022500", 44.82, 133.0, 587675987.0]]
    assert daily(tmp_path)[0] == ("01022500", dt.date(2000, 1, 1), 0.0, 255.0, "A")
    path.write_text("\n".join(lines[:3]) + "\n" + " " * 5000)  # 3 lines, then blanks without a line end
    with pytest.raises(RawFormatError) as caught:
        collect(camels_us.read(tmp_path, Params()))
    assert (caught.value.line, caught.value.problem[:60]) == (
        4, "column header must start with 'Year Mnth Day Hr', found ''")
