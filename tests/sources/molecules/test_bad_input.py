"""Molecules reader on malformed and edge-case SDF, MOL and SMILES files written to tmp_path."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError
from scibench_testing.molecules import records_of, tables, write

from stages.hashing import content_hash
from stages.sources import molecules
from stages.sources.molecules import Params, RawFormatError
from stages.sources.molecules.records import DataItem

# --- malformed and edge-case inputs, written to tmp_path ------------------------------------------

MOLFILE = """ethanol
     RDKit          2D

  3  2  0  0  0  0  0  0  0  0999 V2000
    0.0000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0
    1.2990    0.7500    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0
    2.5981   -0.0000    0.0000 O   0  0  0  0  0  0  0  0  0  0  0  0
  1  2  1  0
  2  3  1  0
M  END
"""  # 10 lines: title 1, counts 4, M  END 10
V3000 = """ethanol v3000
     RDKit          2D

  0  0  0  0  0  0  0  0  0  0999 V3000
M  V30 BEGIN CTAB
M  V30 COUNTS 3 2 0 0 0
M  V30 BEGIN ATOM
M  V30 1 C 0 0 0 0
M  V30 2 C 1.299 0.75 0 0
M  V30 3 O 2.5981 0 0 0
M  V30 END ATOM
M  V30 BEGIN BOND
M  V30 1 1 1 2
M  V30 2 1 2 3
M  V30 END BOND
M  V30 END CTAB
M  END
"""


def record(items: str = "> <LOGS>\n-0.77\n\n", molfile: str = MOLFILE) -> str:
    return molfile + items + "$$$$\n"


def only_error(path: Path) -> RawFormatError:
    parsed = records_of(path)
    errors = [p for p in parsed if isinstance(p, RawFormatError)]
    assert len(errors) == 1 and errors[0].path == str(path)
    return errors[0]


def test_data_item_forms_multiline_values_and_optional_tags(tmp_path):
    text = (record(">  <LOGS>  (1) \n-0.77\n\n> 25 <NOTE>\nfirst line\nsecond line\n\n> <EMPTY>\n\n")
            + record("> <LOGS>\n1.5e-1\n\n"))
    first, second = records_of(write(tmp_path, "a.sdf", text))
    assert first.items == (DataItem("LOGS", "-0.77", 11), DataItem("NOTE", "first line\nsecond line", 14),
                           DataItem("EMPTY", None, 18))
    assert second.record == 2 and second.line == 21 and second.items == (DataItem("LOGS", "1.5e-1", 31),)
    props = tables(tmp_path)["properties"]
    assert props["value_num"].dropna().tolist() in ([-0.77, 0.15], [0.15, -0.77])
    assert props["tag"].value_counts().to_dict() == {"LOGS": 2, "NOTE": 1, "EMPTY": 1}


def test_v3000_records_read_like_v2000(tmp_path):
    write(tmp_path, "a.sdf", record(molfile=V3000) + record())
    frame = tables(tmp_path)["molecules"].sort_values("record")
    assert frame["canonical_smiles"].tolist() == ["CCO", "CCO"]
    assert frame["name"].tolist() == ["ethanol v3000", "ethanol"]


def test_duplicate_structures_get_distinct_ids_and_name_the_first(tmp_path):
    write(tmp_path, "a.sdf", record() * 3)
    frame = tables(tmp_path)["molecules"].set_index("record")
    first = content_hash({"file": "a.sdf", "record": 1, "smiles": "CCO"})
    assert frame.loc[1, "molecule_id"] == first and pd.isna(frame.loc[1, "duplicate_of"])
    assert frame.loc[[2, 3], "duplicate_of"].tolist() == [first, first]
    assert frame["molecule_id"].nunique() == 3


def test_empty_files(tmp_path):
    for name in ("a.sdf", "b.mol", "c.smi"):
        error = only_error(write(tmp_path, name, ""))
        assert (error.line, error.problem) == (1, "file is empty")


def test_truncated_record_without_m_end(tmp_path):
    text = record() + MOLFILE.replace("M  END\n", "")
    error = only_error(write(tmp_path, "a.sdf", text))
    assert (error.line, error.problem) == (23, "record 2: truncated, the file ends at line 23 inside the "
                                               "molfile (no 'M  END'), without the closing '$$$$'")
    error = only_error(write(tmp_path, "b.sdf", MOLFILE.replace("M  END\n", "") + "$$$$\n"))
    assert (error.line, error.problem) == (
        9, "record 1: truncated, no 'M  END' line in the molfile starting at line 1")


def test_missing_final_terminator_is_truncation(tmp_path):
    error = only_error(write(tmp_path, "a.sdf", record() + record()[:-5]))
    assert (error.line, error.problem) == (27, "record 2: truncated, the file ends at line 27 inside the "
                                               "data items, without the closing '$$$$'")


def test_non_numeric_counts_line(tmp_path):
    error = only_error(write(tmp_path, "a.sdf", record(molfile=MOLFILE.replace("  3  2", "  3 xx"))))
    assert (error.line, error.problem) == (
        4, "record 1: counts line must start with the bond count, found 'xx' in "
           "'  3 xx  0  0  0  0  0  0  0  0999 V2000'")


def test_missing_header_lines_are_caught_at_the_counts_line(tmp_path):
    error = only_error(write(tmp_path, "a.sdf", record(molfile=MOLFILE.split("\n", 3)[3])))
    assert error.line == 4
    assert error.problem.startswith("record 1: counts line must start with the atom count, found ''")


def test_atom_block_junk_gives_rdkits_reason(tmp_path):
    error = only_error(write(tmp_path, "a.sdf", record(molfile=MOLFILE.replace("1.2990", "1.2x90"))))
    assert error.line == 1
    assert error.problem == "record 1: RDKit cannot read the molecule: Cannot process coordinates on line 6"


def test_invalid_valence_in_an_sdf_record(tmp_path):
    pentavalent = MOLFILE.replace("  1  2  1  0", "  1  2  3  0").replace("  2  3  1  0", "  2  3  2  0")
    error = only_error(write(tmp_path, "a.sdf", record() + record(molfile=pentavalent)))
    assert (error.line, error.problem) == (15, "record 2: RDKit cannot read the molecule: Explicit "
                                               "valence for atom # 1 C, 5, is greater than permitted")


def test_malformed_data_headers(tmp_path):
    for items, line, found in (("> LOGS\n-0.77\n\n", 11, "'> LOGS'"), ("<LOGS>\n-0.77\n\n", 11, "'<LOGS>'"),
                               ("> <LOGS>\n-0.77\n\n> <>\nx\n\n", 14, "'> <>'")):
        error = only_error(write(tmp_path, "a.sdf", record(items)))
        assert (error.line, error.problem) == (
            line, f"record 1: malformed data header {found}, expected '> <TAG>'")


def test_missing_blank_line_between_data_items(tmp_path):
    error = only_error(write(tmp_path, "a.sdf", record("> <LOGS>\n1\n> <NAME>\nx\n\n")))
    assert (error.line, error.problem) == (
        13, "record 1: data header '> <NAME>' inside the value of <LOGS> (a blank line must end each value)")


def test_duplicated_data_item(tmp_path):
    error = only_error(write(tmp_path, "a.sdf", record("> <LOGS>\n1\n\n> <LOGS>\n2\n\n")))
    assert (error.line, error.problem) == (14, "record 1: duplicated data item <LOGS> (first at line 11)")


def test_invalid_utf8_in_a_name(tmp_path):
    error = only_error(write(tmp_path, "a.sdf", record().encode() + record("> <NAME>\n2,4\xb4-PCB\n\n")
                             .encode("latin-1")))
    assert (error.line, error.problem) == (
        26, "record 2: line is not valid UTF-8 (byte 0xb4 at column 4)")


def test_numeric_tags_reject_junk_and_sentinels_and_null_missing_codes(tmp_path):
    path = write(tmp_path, "a.sdf", record("> <LOGS>\nn/a\n\n") + record("> <LOGS>\n-999\n\n")
                 + record("> <LOGS>\nNA\n\n") + record())
    with pytest.raises(RawFormatError) as caught:
        list(molecules.read(tmp_path, Params(numeric_tags={"LOGS": "log10(mol/L)"})))
    assert (caught.value.path, caught.value.line) == (str(path), 12)
    assert caught.value.problem == "record 1: value 'n/a' of data item <LOGS> is not a number"
    result = tables(tmp_path, numeric_tags={"LOGS": "log10(mol/L)"}, on_error="quarantine")
    assert result["quarantine"][["line", "problem"]].values.tolist() == [
        [12, "record 1: value 'n/a' of data item <LOGS> is not a number"],
        [26, "record 2: unexpected sentinel -999 in data item <LOGS>"]]
    props = result["properties"].merge(result["molecules"][["molecule_id", "record"]]).sort_values("record")
    assert props["record"].tolist() == [3, 4]
    assert props["value_text"].isna().tolist() == [True, False]
    assert props["value_num"].isna().tolist() == [True, False]
    undeclared = tables(tmp_path)["properties"]  # without the declaration: text kept, no number
    assert sorted(undeclared["value_text"]) == ["-0.77", "-999", "NA", "n/a"]


def test_mol_file_with_two_records(tmp_path):
    error = only_error(write(tmp_path, "a.mol", record() + record()))
    assert error.line == 15 and error.problem.startswith("a MOL file holds one molecule")


def test_mol_file_with_a_terminator_or_none(tmp_path):
    assert records_of(write(tmp_path, "a.mol", MOLFILE.rstrip("\n")))[0].mol.GetNumAtoms() == 3
    assert records_of(write(tmp_path, "b.mol", record()))[0].items == (DataItem("LOGS", "-0.77", 11),)


SMILES = "# benzodiazepine fragment\nsmiles\tname\nCCO\tethanol\nc1ccccc1 benzene ring\n\n\n"


def test_smiles_file_with_comment_header_tabs_and_trailing_blank_lines(tmp_path):
    parsed = records_of(write(tmp_path, "a.smi", SMILES))
    assert [(p.record, p.line, p.name) for p in parsed] == [(1, 3, "ethanol"), (2, 4, "benzene ring")]


def test_empty_smiles_lines(tmp_path):
    error = only_error(write(tmp_path, "a.smi", "CCO a\n\nCCN b\n"))
    assert (error.line, error.problem) == (2, "record 2: empty SMILES line")
    error = only_error(write(tmp_path, "b.smi", "CCO a\n\tnameless\n"))
    assert (error.line, error.problem) == (2, "record 2: empty SMILES line")


def test_unparsable_smiles_and_wrong_delimiter(tmp_path):
    error = only_error(write(tmp_path, "a.smi", "CCO a\nC1CC ring\n"))
    assert error.line == 2
    assert error.problem == ("record 2: unparsable SMILES 'C1CC': SMILES Parse Error: unclosed ring for "
                             "input: 'C1CC'")
    error = only_error(write(tmp_path, "b.smi", "CCO,ethanol\n"))
    assert error.line == 1 and error.problem.startswith("record 1: unparsable SMILES 'CCO,ethanol': ")
    assert error.problem.endswith("(fields must be separated by a space or tab, found ',')")
    error = only_error(write(tmp_path, "c.smi", "C(C)(C)(C)(C)C five\n"))
    assert error.problem == ("record 1: unparsable SMILES 'C(C)(C)(C)(C)C': Explicit valence for atom # 0 C,"
                             " 5, is greater than permitted")


def test_smiles_file_with_only_a_header(tmp_path):
    error = only_error(write(tmp_path, "a.smi", "SMILES Name\n"))
    assert (error.line, error.problem) == (None, "no SMILES records (only comments or a header)")


def test_quarantine_keeps_good_files_and_records(tmp_path):
    write(tmp_path, "good.smi", "CCO ethanol\n")
    bad = write(tmp_path, "mixed.sdf", record() + record("> LOGS\n1\n\n") + record())
    write(tmp_path, "notes.txt", "not a molecule file")
    with pytest.raises(RawFormatError, match="malformed data header"):
        list(molecules.read(tmp_path, Params()))
    result = tables(tmp_path, on_error="quarantine")
    problem = "record 2: malformed data header '> LOGS', expected '> <TAG>'"
    assert result["quarantine"].to_dict("records") == [
        {"file": str(bad), "line": 25, "column": None, "problem": problem, "count": None}]
    kept = result["molecules"].sort_values(["source_file", "record"])
    assert kept[["source_file", "record"]].values.tolist() == [["good.smi", 1], ["mixed.sdf", 1],
                                                                ["mixed.sdf", 3]]


def test_a_folder_without_molecule_files(tmp_path):
    write(tmp_path, "notes.txt", "x")
    with pytest.raises(RawFormatError) as caught:
        list(molecules.read(tmp_path, Params()))
    assert caught.value.path == str(tmp_path) and caught.value.problem.startswith("no molecule files")
    assert len(tables(tmp_path, on_error="quarantine")["quarantine"]) == 1


def test_params_reject_unknown_keys():
    with pytest.raises(ValidationError):
        Params(on_error="ignore")
    with pytest.raises(ValidationError):
        Params(sanitize=False)


def test_only_plain_decimal_numbers_get_a_numeric_value():
    values = ("1", "-3.18", "1.5e-1", " 2 ", ".5", "nan", "inf", "1,5", "(A) low", "", None, "1 2")
    assert [molecules.parse_number(v) for v in values] == [
        1.0, -3.18, 0.15, 2.0, 0.5, None, None, None, None, None, None, None]


def test_unknown_molfile_version(tmp_path):
    error = only_error(write(tmp_path, "a.sdf", record(molfile=MOLFILE.replace("V2000", "V4000"))))
    assert (error.line, error.problem) == (4, "record 1: unknown molfile version 'V4000'")
