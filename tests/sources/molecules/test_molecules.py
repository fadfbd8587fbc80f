"""Molecules reader: every real file in ../shared/realdata/molecules_rdkit, then malformed inputs."""

from __future__ import annotations

import pandas as pd
import pytest
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator
from scibench_testing.molecules import records_of, tables, write
from scibench_testing.realdata import REALDATA, realdata, requires_realdata

from stages.hashing import content_hash
from stages.repository import validate_table, write_tables
from stages.sources import molecules
from stages.sources.molecules import Params, RawFormatError
from stages.sources.molecules.records import Record
from stages.tables import Table

MOLECULES = REALDATA / "molecules_rdkit"
needs_real = requires_realdata("molecules_rdkit")
RECORDS = {"solubility.train.sdf": 1025, "cdk2.sdf": 47, "chiral.mol": 1, "input.mol": 1,
           "bzr.smi": 10, "invalid.mol": 0}
INVALID_PROBLEM = ("record 1: RDKit cannot read the molecule: Explicit valence for atom # 6 N, 4, is"
                   " greater than permitted")
_MORGAN_R2 = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
CDK2_TAGS = {"id", "Cluster", "MODEL.SOURCE", "MODEL.CCRATIO", "r_mmffld_Potential_Energy-OPLS_2005",
             "r_mmffld_RMS_Derivative-OPLS_2005", "b_mmffld_Minimization_Converged-OPLS_2005"}


@pytest.fixture(scope="module")
def real_tables() -> list[Table]:
    realdata("molecules_rdkit")
    params = Params(on_error="quarantine", numeric_tags={"SOL": "log10(mol/L)"})
    return list(molecules.read(MOLECULES, params))


@pytest.fixture(scope="module")
def real(real_tables) -> dict[str, pd.DataFrame]:
    return {t.name: t.frame for t in real_tables}


# --- real files -----------------------------------------------------------------------------------


@needs_real
@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_real_file_reads_with_the_expected_number_of_records(name):
    parsed = records_of(MOLECULES / name)
    good = [p for p in parsed if isinstance(p, Record)]
    assert len(good) == RECORDS[name]
    assert [p.record for p in good] == list(range(1, len(good) + 1))
    assert len(parsed) - len(good) == (1 if name == "invalid.mol" else 0)


@needs_real
def test_invalid_mol_raises_with_rdkits_reason():
    with pytest.raises(RawFormatError) as caught:
        list(molecules.read(MOLECULES, Params()))
    error = caught.value
    assert (error.path, error.line, error.problem) == (str(MOLECULES / "invalid.mol"), 1, INVALID_PROBLEM)


@needs_real
def test_quarantine_keeps_every_other_real_record(real):
    assert real["quarantine"].to_dict("records") == [
        {"file": str(MOLECULES / "invalid.mol"), "line": 1, "column": None, "problem": INVALID_PROBLEM, "count": None}]
    counts = real["molecules"].groupby("source_file").size().to_dict()
    assert counts == {name: n for name, n in RECORDS.items() if n}


@needs_real
def test_n_pentane_descriptors_are_exact(real):
    frame = real["molecules"]
    row = frame[(frame["source_file"] == "solubility.train.sdf") & (frame["record"] == 1)].iloc[0]
    assert row["name"] == "n-pentane" and row["canonical_smiles"] == "CCCCC"
    assert row["inchikey"] == "OFBQJSOFQDEBGM-UHFFFAOYSA-N"
    assert row["mol_wt_g_mol"] == pytest.approx(72.151, abs=1e-9)
    assert row["logp"] == pytest.approx(2.1965, abs=1e-9)
    counts = ["tpsa_a2", "hbd", "hba", "rings", "heavy_atoms", "rotatable_bonds", "aromatic_proportion"]
    assert row[counts].tolist() == [0.0, 0, 0, 0, 5, 2, 0.0]
    key = {"file": "solubility.train.sdf", "record": 1, "smiles": "CCCCC"}
    assert row["molecule_id"] == content_hash(key)
    items = real["properties"][real["properties"]["molecule_id"] == row["molecule_id"]]
    assert items["tag"].tolist() == ["ID", "NAME", "SOL", "SOL_classification", "smiles"]
    assert items["value_text"].tolist() == ["1", "n-pentane", "-3.18", "(A) low", "CCCCC"]
    assert items["value_num"].fillna(0.5).tolist() == [1.0, 0.5, -3.18, 0.5, 0.5]  # 0.5: not a number
    assert items["unit"].fillna("").tolist() == ["", "", "log10(mol/L)", "", ""]


@needs_real
def test_solubility_classes_odd_names_and_duplicates_are_reported(real):
    frame, props = real["molecules"], real["properties"]
    classes = props.loc[props["tag"] == "SOL_classification", "value_text"].value_counts().to_dict()
    assert classes == {"(A) low": 417, "(B) medium": 402, "(C) high": 206}
    solubility = frame[frame["source_file"] == "solubility.train.sdf"].set_index("record")
    assert solubility.loc[177, "name"] == "4,4\uffb4-PCB"
    duplicates = solubility[solubility["duplicate_of"].notna()]
    assert sorted(duplicates.index) == [415, 673, 950, 1011]
    firsts = frame.set_index("molecule_id").loc[duplicates.loc[415, "duplicate_of"]]
    assert (firsts["record"], firsts["name"]) == (403, "dexamethasone")  # stereo not in the file
    assert frame["molecule_id"].is_unique


@needs_real
def test_cdk2_has_optional_chirality_tags_on_some_records(real):
    frame, props = real["molecules"], real["properties"]
    cdk2 = frame[frame["source_file"] == "cdk2.sdf"]
    items = props[props["molecule_id"].isin(cdk2["molecule_id"])]
    counts = items["tag"].value_counts().to_dict()
    assert counts == dict.fromkeys(CDK2_TAGS, 47) | {
        "s_st_Chirality_1": 10, "s_st_Chirality_2": 1, "s_st_Chirality_3": 1}
    first = cdk2[cdk2["record"] == 1].iloc[0]
    assert first["name"] == "ZINC03814457"
    assert first["canonical_smiles"] == "CC(C)C(=O)COc1nc(N)nc2[nH]cnc12"  # explicit H removed
    assert first["heavy_atoms"] == 17


@needs_real
def test_mol_and_smiles_files(real):
    frame = real["molecules"].set_index("source_file")
    assert frame.loc["chiral.mol", "canonical_smiles"] == "C[C@H](O)c1ccccc1"
    assert frame.loc["input.mol", "canonical_smiles"] == "Cc1cccc2[nH]ccc12"
    assert pd.isna(frame.loc["chiral.mol", "name"])  # blank title line
    bzr = real["molecules"][real["molecules"]["source_file"] == "bzr.smi"].sort_values("record")
    assert bzr["record"].tolist() == list(range(1, 11))
    assert bzr["name"].iloc[0] == "Adinazolam" and bzr["name"].iloc[-1] == "Desmethylclobazam"
    assert bzr["canonical_smiles"].iloc[0] == "CN(C)Cc1nnc2n1-c1ccc(Cl)cc1C(c1ccccc1)=NC2"


@needs_real
def test_tables_are_valid_and_fingerprints_are_morgan_on_bits(real_tables, real):
    assert [t.name for t in real_tables] == ["molecules", "properties", "fingerprints", "quarantine"]
    for table in real_tables:
        validate_table(table)
    bits = real["fingerprints"]
    assert bits["bit"].between(0, 2047).all()
    pentane = real["molecules"].query("canonical_smiles == 'CCCCC'")["molecule_id"].iloc[0]
    expected = _MORGAN_R2.GetFingerprint(Chem.MolFromSmiles("CCCCC")).GetOnBits()
    assert bits.loc[bits["molecule_id"] == pentane, "bit"].tolist() == list(expected)
    assert list(expected) == [80, 294, 591, 794, 1057, 1405, 1911]


@needs_real
def test_crlf_files_read_identically(tmp_path):
    for name in ("cdk2.sdf", "bzr.smi", "chiral.mol"):
        data = (MOLECULES / name).read_bytes()
        write(tmp_path / "crlf", name, data.replace(b"\n", b"\r\n"))
        write(tmp_path / "lf", name, data)
    crlf, lf = tables(tmp_path / "crlf"), tables(tmp_path / "lf")
    assert len(lf["molecules"]) == 47 + 10 + 1
    for name in ("molecules", "properties", "fingerprints", "quarantine"):
        pd.testing.assert_frame_equal(crlf[name], lf[name])


@needs_real
def test_written_tables_are_byte_deterministic(tmp_path, real_tables):
    write_tables(tmp_path / "a", real_tables, {})
    params = Params(on_error="quarantine", numeric_tags={"SOL": "log10(mol/L)"})
    write_tables(tmp_path / "b", list(molecules.read(MOLECULES, params)), {})
    for path in sorted((tmp_path / "a").iterdir()):
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes(), path.name
