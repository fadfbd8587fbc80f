"""CAMELS-US reader on small files written to tmp_path: well-formed layouts, malformed input, quarantine.

Forcing files (headers, columns, values, dates, delimiters), streamflow files, attribute files and a
missing file each fail with the file, line and problem named; a bad basin is quarantined while the
others are kept; unknown parameters are refused. The real sample files are in test_camels_us.py.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pydantic import ValidationError

from stages.sources import camels_us
from stages.sources.camels_us import ForcingHeader, Params, RawFormatError
from stages.tables import collect

# --- malformed inputs, written to tmp_path --------------------------------------------------------

HEADER = ["  44.82", " 133.00", " 587675987",
          "Year Mnth Day Hr dayl(s) prcp(mm/day) srad(W/m2) swe(mm) tmax(C) tmin(C) vp(Pa)"]
ROWS = ["2000 01 01 12\t31185.97\t0.00\t189.56\t0.00\t-2.36\t-14.36\t202.51",
        "2000 01 02 12\t31302.05\t0.00\t200.48\t0.00\t4.81\t-8.61\t319.42",
        "2000 01 03 12\t31425.67\t1.25\t190.00\t0.00\t1.00\t-5.00\t400.00"]
FLOW = ["01022500 2000 01 01   255.00 A:e", "01022500 2000 01 02  -999.00 M",
        "01022500 2000 01 03   337.00 A"]
FORCING_NAME = "basin_mean_forcing/daymet/01/01022500_lump_cida_forcing_leap.txt"
FLOW_NAME = "usgs_streamflow/01/01022500_streamflow_qc.txt"


def write(root: Path, relative: str, lines: list[str] | str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(lines if isinstance(lines, str) else "\n".join(lines) + "\n")
    return path


def forcing_error(tmp_path: Path, lines: list[str] | str) -> RawFormatError:
    path = write(tmp_path, FORCING_NAME, lines)
    with pytest.raises(RawFormatError) as caught:
        camels_us.read_forcings(tmp_path, "01022500", "daymet")
    assert caught.value.path == str(path)
    return caught.value


def flow_error(tmp_path: Path, lines: list[str] | str) -> RawFormatError:
    path = write(tmp_path, FLOW_NAME, lines)
    with pytest.raises(RawFormatError) as caught:
        camels_us.read_streamflow(tmp_path, "01022500", 587675987.0)
    assert caught.value.path == str(path)
    return caught.value


def test_a_small_well_formed_forcing_file_reads_in_a_flat_layout(tmp_path):
    write(tmp_path, "basin_mean_forcing/daymet/01022500_lump_cida_forcing_leap.txt",
          "\n".join(HEADER + ROWS))  # flat, and no trailing newline
    frame, header = camels_us.read_forcings(tmp_path, "01022500", "daymet")
    assert header == ForcingHeader(44.82, 133.0, 587675987.0)
    assert frame["date"].tolist() == [dt.date(2000, 1, d) for d in (1, 2, 3)]
    assert frame["prcp_mm_d"].tolist() == [0.0, 0.0, 1.25]


def test_maurer_extended_layout_with_tabs_and_unpadded_dates(tmp_path):
    rows = ["\t".join("Year Mnth Day Hr dayl(s) prcp(mm/day) srad(W/m2) swe(mm) tmax(C) tmin(C)"
                      " vp(Pa)".split()),
            "2000\t1\t1\t12\t31185.94\t0.0\t233.66\t0.0\t-2.09\t-14.99\t192.89",
            "2000\t1\t2\t12\t31302.07\t4.21\t198.52\t0.0\t4.18\t-10.29\t308.07"]
    write(tmp_path, "basin_mean_forcing/maurer_extended/01/01022500_lump_maurer_forcing_leap.txt",
          HEADER[:3] + rows)
    frame, _ = camels_us.read_forcings(tmp_path, "01022500", "maurer_extended")
    assert frame.loc[1, ["prcp_mm_d", "tmin_c"]].tolist() == [4.21, -10.29]


def test_empty_forcing_file(tmp_path):
    error = forcing_error(tmp_path, "")
    assert (error.line, error.problem) == (1, "file is empty")


def test_truncated_header(tmp_path):
    error = forcing_error(tmp_path, HEADER[:2])
    assert error.line == 3
    assert error.problem.startswith("file ends after 2 line(s); expected 3 header lines")


def test_truncated_last_row(tmp_path):
    error = forcing_error(tmp_path, "\n".join(HEADER + ROWS[:2]) + "\n2000 01 03 12\t31425.67\t1.2")
    assert (error.line, error.problem) == (7, "expected 11 fields, found 6")


def test_missing_column_header(tmp_path):
    error = forcing_error(tmp_path, HEADER[:3] + ROWS)
    assert error.line == 4
    assert error.problem.startswith("missing column header: line 4 is a data row")


def test_missing_numeric_header_lines(tmp_path):
    error = forcing_error(tmp_path, HEADER[3:] + ROWS)
    assert error.line == 1
    assert error.problem.startswith("header line 1 must be the latitude as one number, found 'Year")


def test_non_positive_area_in_header(tmp_path):
    error = forcing_error(tmp_path, [*HEADER[:2], " 0", HEADER[3], *ROWS])
    assert (error.line, error.problem) == (3, "header line 3 must be the basin area as one "
                                              "positive number, found '0'")


def test_unknown_and_missing_forcing_columns(tmp_path):
    error = forcing_error(tmp_path, [*HEADER[:3], HEADER[3].replace("vp(Pa)", "wind(m/s)"), *ROWS])
    assert (error.line, error.problem) == (4, "unknown column 'wind(m/s)' in the column header")
    error = forcing_error(tmp_path, [*HEADER[:3], HEADER[3].replace(" vp(Pa)", ""), *ROWS])
    assert (error.line, error.problem) == (4, "missing column(s) vp_pa in column header")


def test_junk_value_names_line_and_column(tmp_path):
    junk = ROWS[1].replace("\t0.00\t200", "\t0.0x\t200")
    error = forcing_error(tmp_path, HEADER + [ROWS[0], junk])
    assert (error.line, error.problem) == (6, "value '0.0x' in prcp_mm_d is not a number")


def test_nan_token_is_not_accepted_as_a_value(tmp_path):
    error = forcing_error(tmp_path, HEADER + [ROWS[0].replace("202.51", "NaN")])
    assert (error.line, error.problem) == (5, "value 'NaN' in vp_pa is not a number")


def test_unexpected_sentinel_in_forcing(tmp_path):
    sentinel = ROWS[1].replace("\t0.00\t200", "\t-999.00\t200")
    error = forcing_error(tmp_path, HEADER + [ROWS[0], sentinel])
    assert (error.line, error.problem) == (
        6, "unexpected sentinel -999 in column prcp_mm_d (forcings are gap-free)")


def test_duplicated_date(tmp_path):
    error = forcing_error(tmp_path, HEADER + ROWS[:2] + [ROWS[1]])
    assert (error.line, error.problem) == (7, "duplicated date 2000-01-02 (first at line 6)")


def test_impossible_date(tmp_path):
    error = forcing_error(tmp_path, HEADER + [ROWS[0].replace("2000 01 01", "2001 02 29")])
    assert (error.line, error.problem) == (5, "impossible date 2001-02-29")


def test_comma_delimited_forcing_file(tmp_path):
    lines = [line.replace(" ", ",").replace("\t", ",") for line in HEADER[3:] + ROWS]
    error = forcing_error(tmp_path, HEADER[:3] + lines)
    assert error.line == 4
    assert error.problem.endswith("(fields must be separated by whitespace, found ',')")


def test_blank_lines_are_skipped_and_line_numbers_stay_exact(tmp_path):
    error = forcing_error(tmp_path, HEADER + [ROWS[0], "", ROWS[1], ROWS[1]])
    assert (error.line, error.problem) == (8, "duplicated date 2000-01-02 (first at line 7)")


def test_missing_forcing_file_names_the_glob(tmp_path):
    with pytest.raises(RawFormatError) as caught:
        camels_us.read_forcings(tmp_path, "01022500", "daymet")
    pattern = tmp_path / "basin_mean_forcing/daymet/**/01022500_*_forcing_leap.txt"
    assert caught.value.path == str(pattern)
    assert caught.value.line is None
    assert caught.value.problem == "expected one matching file, found none"


def test_streamflow_sentinel_becomes_null_and_keeps_flag(tmp_path):
    write(tmp_path, FLOW_NAME, FLOW)
    flow = camels_us.read_streamflow(tmp_path, "01022500", 587675987.0)
    assert flow["qobs_flag"].tolist() == ["A:e", "M", "A"]
    assert flow["qobs_cfs"].isna().tolist() == [False, True, False]
    assert flow["qobs_mm_d"].isna().tolist() == [False, True, False]


def test_streamflow_errors_name_file_line_and_problem(tmp_path):
    error = flow_error(tmp_path, [FLOW[0], FLOW[1].replace("01022500", "01013500")])
    assert (error.line, error.problem) == (
        2, "gauge id '01013500' does not match the basin 01022500")
    error = flow_error(tmp_path, [FLOW[0], FLOW[2], FLOW[2]])
    assert (error.line, error.problem) == (3, "duplicated date 2000-01-03 (first at line 2)")
    error = flow_error(tmp_path, [FLOW[0], FLOW[1].replace(" M", "")])
    assert (error.line, error.problem) == (2, "expected 6 fields, found 5")
    error = flow_error(tmp_path, [FLOW[0], FLOW[1].replace("-999.00", "n/a")])
    assert (error.line, error.problem) == (2, "value 'n/a' in qobs_cfs is not a number")
    error = flow_error(tmp_path, [",".join(FLOW[0].split())])
    assert (error.line, error.problem) == (
        1, "expected 6 fields, found 1 (fields must be separated by whitespace, found ',')")
    error = flow_error(tmp_path, "")
    assert (error.line, error.problem) == (1, "file is empty")


@pytest.mark.parametrize(("first", "problem"), [  # inputs found by tests/fuzz/test_camels_us.py
    ("01022500 99999999 01 01   255.00 A:e", "impossible date 99999999-01-01"),
    ("01022500 18446744073709551616 01 01   255.00 A:e",
     "value 18446744073709551616 in year is outside the 64-bit integer range"),
    ("\xa0", "expected 6 fields, found 1"),  # a no-break space is not blank to the parser
])
def test_streamflow_rows_found_by_fuzzing(tmp_path, first, problem):
    error = flow_error(tmp_path, [first, *FLOW[1:]])
    assert (error.line, error.problem) == (1, problem)


def test_non_utf8_streamflow_names_the_line(tmp_path):
    path = write(tmp_path, FLOW_NAME, FLOW)
    path.write_bytes(path.read_bytes().replace(b"A:e", b"A:\x80"))
    with pytest.raises(RawFormatError) as caught:
        camels_us.read_streamflow(tmp_path, "01022500", 587675987.0)
    assert (caught.value.line, caught.value.problem) == (1, "not UTF-8 text (byte 0x80)")


def test_forcing_rows_found_by_fuzzing(tmp_path):
    error = forcing_error(tmp_path, HEADER + [ROWS[0].replace("2000 01 01", "99999999 01 01"), *ROWS[1:]])
    assert (error.line, error.problem) == (5, "impossible date 99999999-01-01")
    error = forcing_error(tmp_path, HEADER + ROWS + ["\xa0"])
    assert (error.line, error.problem) == (8, "expected 11 fields, found 1")


def test_unsorted_streamflow_is_accepted_and_sorted(tmp_path):
    write(tmp_path, FLOW_NAME, [FLOW[2], FLOW[0]])
    flow = camels_us.read_streamflow(tmp_path, "01022500", 587675987.0)
    assert flow["date"].tolist() == [dt.date(2000, 1, 1), dt.date(2000, 1, 3)]
    assert flow["qobs_cfs"].tolist() == [255.0, 337.0]


NAME = ["gauge_id;huc_02;gauge_name", "01022500;01;Narraguagus River at Cherryfield, Maine",
        "01547700;02;Marsh Creek at Blanchard, PA"]
TOPO = ["gauge_id;gauge_lat;gauge_lon;elev_mean;slope_mean;area_gages2;area_geospa_fabric",
        "01022500;44.60797;-67.93524;92.68;17.79072;573.6;620.38",
        "01547700;41.05950;-77.60583;470.58;54.80508;114.4;115.87"]


def attributes_error(tmp_path: Path, group: str, lines: list[str]) -> RawFormatError:
    write(tmp_path, "camels_attributes_v2.0/camels_name.txt", NAME)
    write(tmp_path, "camels_attributes_v2.0/camels_topo.txt", TOPO)
    path = write(tmp_path, f"camels_attributes_v2.0/camels_{group}.txt", lines)
    with pytest.raises(RawFormatError) as caught:
        camels_us.read_attributes(tmp_path)
    assert caught.value.path == str(path)
    return caught.value


def test_attribute_file_errors(tmp_path):
    error = attributes_error(tmp_path, "name", [NAME[0], NAME[1], NAME[1]])
    assert (error.line, error.problem) == (3, "duplicated gauge_id 01022500 (first at line 2)")
    error = attributes_error(tmp_path, "topo", [TOPO[0] + ";wind", TOPO[1] + ";1"])
    assert (error.line, error.problem) == (1, "unknown column 'wind'")
    error = attributes_error(tmp_path, "topo", [TOPO[0], TOPO[1].replace("573.6", "5x")])
    assert (error.line, error.problem) == (2, "value '5x' in column area_gages2 is not a number")
    error = attributes_error(tmp_path, "topo", [TOPO[0], TOPO[1].replace(";573.6", "")])
    assert (error.line, error.problem) == (2, "expected 7 ';'-separated fields, found 6")
    error = attributes_error(tmp_path, "name", [NAME[0], NAME[1][1:]])
    assert (error.line, error.problem) == (2, "gauge_id '1022500' is not an 8-digit USGS id")
    error = attributes_error(tmp_path, "name", [NAME[0].replace(";", ",")])
    assert error.line == 1 and error.problem.startswith("first column must be gauge_id")


def test_required_attribute_file_missing(tmp_path):
    write(tmp_path, "camels_attributes_v2.0/camels_name.txt", NAME)
    with pytest.raises(RawFormatError) as caught:
        camels_us.read_attributes(tmp_path)
    assert caught.value.path == str(tmp_path / "camels_attributes_v2.0/camels_topo.txt")
    assert caught.value.problem == "required attribute file is missing"


def test_quarantine_records_the_bad_basin_and_keeps_the_others(tmp_path):
    write(tmp_path, "camels_attributes_v2.0/camels_name.txt", NAME)
    write(tmp_path, "camels_attributes_v2.0/camels_topo.txt", TOPO)
    write(tmp_path, FORCING_NAME, HEADER + ROWS)
    write(tmp_path, FLOW_NAME, FLOW)
    bad = write(tmp_path, FORCING_NAME.replace("01022500", "01547700").replace("/01/", "/02/"),
                HEADER + [ROWS[0], ROWS[0]])
    write(tmp_path, FLOW_NAME.replace("01022500", "01547700"), FLOW)
    with pytest.raises(RawFormatError, match="duplicated date 2000-01-01"):
        collect(camels_us.read(tmp_path, Params()))
    tables = {n: t.frame for n, t in collect(camels_us.read(tmp_path, Params(on_error="quarantine"))).items()}
    assert tables["quarantine"].to_dict("records") == [
        {"file": str(bad), "line": 6, "column": None, "problem": "duplicated date 2000-01-01 (first at line 5)",
         "count": None}]
    assert tables["daily"]["gauge_id"].unique().tolist() == ["01022500"]
    headers = tables["attributes"].set_index("gauge_id")["header_area_m2"]
    assert headers.isna().tolist() == [False, True]


def test_params_reject_unknown_keys_and_products():
    with pytest.raises(ValidationError):
        Params(forcing="daymet", foo=1)
    with pytest.raises(ValidationError):
        Params(forcing="era5")
