"""Control-set reader: the generator's files read back exactly; every malformed input names file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scibench_testing.files import folder_bytes

from stages.repository import write_tables
from stages.sources import control
from stages.sources.control import Params, RawFormatError
from stages.synthesize import control as synthesize

SMALL = synthesize.Params(n_series=8, first_year=2000, last_year=2000)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("control")
    synthesize.write(root, SMALL)
    return root


@pytest.fixture
def raw(generated, tmp_path) -> Path:
    """A private copy of the generated files, to break."""
    return Path(shutil.copytree(generated, tmp_path / "raw"))


def tables(root: Path, **params) -> dict[str, pd.DataFrame]:
    return {t.name: t.frame for t in control.read(root, Params(**params))}


def error_of(root: Path, **params) -> tuple[str, int | None, str]:
    with pytest.raises(RawFormatError) as caught:
        tables(root, **params)
    return Path(caught.value.path).name, caught.value.line, caught.value.problem


def edit_line(path: Path, number: int, replace: tuple[str, str] | None = None, text: str | None = None) -> None:
    lines = path.read_text().split("\n")
    lines[number - 1] = text if text is not None else lines[number - 1].replace(*replace, 1)
    path.write_text("\n".join(lines))


def test_generated_files_read_back_exactly(generated):
    result = tables(generated)
    assert list(result) == ["series", "daily", "quarantine"]
    series, daily = result["series"], result["daily"]
    written = pd.read_csv(generated / "series.csv")
    assert series["series_id"].tolist() == written["series_id"].tolist()
    assert series["a1"].to_numpy() == pytest.approx(written["a1"].to_numpy())
    assert str(series["component"].dtype) == "Int64" and series["component"].notna().sum() == 2
    assert len(daily) == 8 * 366 and str(daily["date"].dtype) == "date32[day][pyarrow]"
    ar = pd.read_csv(generated / "ar.csv")
    first = daily[daily["series_id"] == ar["series_id"].iloc[0]]
    assert first["y"].to_numpy() == pytest.approx(ar["y"].iloc[:366].to_numpy())
    assert result["quarantine"].empty


def test_same_seed_gives_byte_identical_raw_and_ingested_files(generated, tmp_path):
    synthesize.write(tmp_path / "again", SMALL)
    assert folder_bytes(tmp_path / "again") == folder_bytes(generated)
    first = write_tables(tmp_path / "a", list(control.read(generated, Params())), {})
    second = write_tables(tmp_path / "b", list(control.read(tmp_path / "again", Params())), {})
    assert {n: e["sha256"] for n, e in first["tables"].items()} == {n: e["sha256"] for n, e in second["tables"].items()}


def test_crlf_line_ends_a_byte_order_mark_and_empty_lines_read_alike(raw, generated):
    text = (raw / "noise.csv").read_text()
    (raw / "noise.csv").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n\r\n").encode())
    pd.testing.assert_frame_equal(tables(raw)["daily"], tables(generated)["daily"])


def test_an_empty_value_cell_is_a_missing_observation(raw):
    edit_line(raw / "linear.csv", 3, text=",".join([*(raw / "linear.csv").read_text().split("\n")[2].split(",")[:2],
                                                     "", *["0.5"] * 5]))
    daily = tables(raw)["daily"]
    first = (raw / "linear.csv").read_text().split("\n")[2].split(",")
    row = daily[(daily["series_id"] == first[0]) & (daily["date"].astype(str) == first[1])]
    assert np.isnan(row["y"].iloc[0]) and row["x5"].iloc[0] == 0.5


@pytest.mark.parametrize(("file", "line", "edit", "problem"), [
    ("ar.csv", 1, ("x5", "x6"), "header must be series_id,date,y,x1,x2,x3,x4,x5: missing column 'x5'"),
    ("ar.csv", 1, ("x4,x5", "x5,x4"), "header must be series_id,date,y,x1,x2,x3,x4,x5: columns out of order"),
    ("ar.csv", 4, ("2000-01-03", "2000-02-30"), "date '2000-02-30' is not a valid YYYY-MM-DD date"),
    ("ar.csv", 5, ("2000-01-04", "20000104"), "date '20000104' is not a valid YYYY-MM-DD date"),
    ("mixture.csv", 7, ("2000-01-06,", "2000-01-06;"), "expected 8 fields, found 7 (fields must be separated by"
                                                       " ',', found ';')"),
    ("series.csv", 3, (",", ",,"), "expected 8 fields, found 9"),
])
def test_malformed_lines_name_file_line_and_problem(raw, file, line, edit, problem):
    edit_line(raw / file, line, edit)
    assert error_of(raw) == (file, line, problem)


@pytest.mark.parametrize(("file", "line", "column", "value", "problem"), [
    ("noise.csv", 9, "y", "nan", "value 'nan' in column y is not a finite number"),
    ("linear.csv", 11, "x3", "-9999x", "value '-9999x' in column x3 is not a finite number"),
    ("ar.csv", 12, "x5", "inf", "value 'inf' in column x5 is not a finite number"),
])
def test_bad_values_name_file_line_column_and_token(raw, file, line, column, value, problem):
    fields = (raw / file).read_text().split("\n")[line - 1].split(",")
    fields[control.DAILY_COLUMNS.index(column)] = value
    edit_line(raw / file, line, text=",".join(fields))
    assert error_of(raw) == (file, line, problem)


def test_a_repeated_day_names_the_first_one(raw):
    lines = (raw / "noise.csv").read_text().split("\n")
    lines.insert(20, lines[5])
    (raw / "noise.csv").write_text("\n".join(lines))
    series_id, day = lines[5].split(",")[:2]
    assert error_of(raw) == ("noise.csv", 21, f"duplicated series {series_id} on {day} (first at line 6)")


def test_series_must_be_catalogued_and_in_their_familys_file(raw):
    ar = (raw / "ar.csv").read_text().split("\n")
    other = pd.read_csv(raw / "series.csv").query("family == 'noise'")["series_id"].iloc[0]
    edit_line(raw / "ar.csv", 2, (ar[1].split(",")[0], other))
    assert error_of(raw) == ("ar.csv", 2, f"series {other} is of family 'noise' in series.csv, not 'ar'")
    edit_line(raw / "ar.csv", 2, (other, "S9999"))
    assert error_of(raw) == ("ar.csv", 2, "series_id 'S9999' is not in series.csv")


@pytest.mark.parametrize(("column", "value", "problem"), [
    ("family", "arima", "unknown family 'arima' (one of mixture, noise, ar, linear)"),
    ("component", "1", "a {family} series must not have a component"),
    ("driver", "x9", "a {family} series must not have a driver"),
    ("series_id", "S 1", "series_id 'S 1' is empty or holds characters other than letters, digits, '_' and '-'"),
    ("a2", "", "empty value in column a2"),
])
def test_series_catalogue_rows_are_checked(raw, column, value, problem):
    series = pd.read_csv(raw / "series.csv", dtype=str, keep_default_na=False)
    row = int(np.flatnonzero(series["family"].isin(["noise", "ar"]))[0])
    family = series.loc[row, "family"]
    series.loc[row, column] = value
    (raw / "series.csv").write_text(series.to_csv(index=False, lineterminator="\n"))
    assert error_of(raw) == ("series.csv", row + 2, problem.format(family=family))


def test_mixture_components_must_be_positive_integers_and_ids_unique(raw):
    series = pd.read_csv(raw / "series.csv", dtype=str, keep_default_na=False)
    row = int(np.flatnonzero(series["family"] == "mixture")[0])
    series.loc[row, "component"] = "0"
    (raw / "series.csv").write_text(series.to_csv(index=False, lineterminator="\n"))
    assert error_of(raw) == ("series.csv", row + 2, "component '0' is not a positive integer")
    series.loc[row, "component"] = "1"
    series.loc[row, "series_id"] = series.loc[0 if row else 1, "series_id"]
    (raw / "series.csv").write_text(series.to_csv(index=False, lineterminator="\n"))
    first, later = sorted([row + 2, (0 if row else 1) + 2])
    assert error_of(raw) == ("series.csv", later, f"duplicated series_id {series.loc[row, 'series_id']}"
                                                   f" (first at line {first})")


def test_missing_catalogue_unknown_csv_and_bad_bytes(raw):
    (raw / "extra.csv").write_text("a,b\n1,2\n")
    assert error_of(raw) == ("extra.csv", None, "unknown csv file: expected series.csv or one of mixture.csv,"
                                                " noise.csv, ar.csv, linear.csv")
    (raw / "extra.csv").unlink()
    head = (raw / "noise.csv").read_bytes()[:200]
    (raw / "noise.csv").write_bytes(head + b"\xff\n")
    assert error_of(raw) == ("noise.csv", head.count(b"\n") + 1, "text is not valid UTF-8")
    (raw / "series.csv").unlink()
    assert error_of(raw) == ("series.csv", None, "file not found")


def test_quarantine_leaves_a_bad_family_file_out_and_keeps_the_rest(raw):
    edit_line(raw / "ar.csv", 4, ("2000-01-03", "2000-13-03"))
    (raw / "notes.csv").write_text("x\n")
    result = tables(raw, on_error="quarantine")
    quarantine = result["quarantine"]
    assert [(Path(f).name, line) for f, line in zip(quarantine["file"], quarantine["line"], strict=True)] == [
        ("ar.csv", 4), ("notes.csv", -1)]
    families = result["series"].set_index("series_id")["family"]
    kept = set(families[result["daily"]["series_id"].unique()])
    assert kept == {"mixture", "noise", "linear"}
