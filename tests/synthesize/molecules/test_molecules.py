"""Synthetic molecules: native SDF/SMILES files, determinism, quarantine path, ESOL relation."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from scibench_testing.files import folder_bytes
from sklearn.linear_model import LinearRegression

from stages.sources import molecules as reader
from stages.synthesize import molecules
from stages.synthesize.molecules import Params

TINY = Params(n_molecules=50)
DEFAULT = Params(n_molecules=1000)
READ = reader.Params(on_error="quarantine", numeric_tags={"LOGS": "log10(mol/L)"})
DESCRIPTORS = ["mol_wt_g_mol", "logp", "tpsa_a2", "hbd", "hba", "rings", "heavy_atoms",
               "rotatable_bonds", "aromatic_proportion"]
QUARANTINED = [
    (18, "record 2: RDKit cannot read the molecule: Explicit valence for atom # 1 C, 5, is greater"
         " than permitted"),
    (68, "record 4: counts line must start with the atom count, found 'x3' in"
         " ' x3  2  0  0  0  0  0  0  0  0999 V2000'"),
    (95, "record 5: malformed data header '>  LOGS  (5)', expected '> <TAG>'"),
    (113, "record 6: value 'n/a' of data item <LOGS> is not a number"),
    (124, "record 7: truncated, the file ends at line 124 inside the molfile (no 'M  END'), without"
          " the closing '$$$$'"),
]


def tables(root: Path, params: reader.Params = READ) -> dict[str, pd.DataFrame]:
    return {t.name: t.frame for t in reader.read(root, params)}


def wide(result: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per molecule of molecules.sdf with its descriptors and LOGS."""
    frame = result["molecules"][result["molecules"]["source_file"] == "molecules.sdf"]
    props = result["properties"]
    logs = props[props["tag"] == "LOGS"].set_index("molecule_id")["value_num"].rename("logs")
    classes = props[props["tag"] == "LOGS_classification"].set_index("molecule_id")["value_text"]
    return frame.join(logs, on="molecule_id").join(classes.rename("logs_class"), on="molecule_id")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    molecules.write(root, TINY)
    return root


@pytest.fixture(scope="module")
def default(tmp_path_factory) -> dict[str, pd.DataFrame]:
    root = tmp_path_factory.mktemp("default")
    molecules.write(root, DEFAULT)
    return tables(root)


def test_tiny_files_are_native_sdf_and_smiles(tiny):
    names = folder_bytes(tiny)
    assert list(names) == ["invalid_records.sdf", "molecules.sdf", "molecules_subset.smi"]
    text = names["molecules.sdf"].decode("utf-8")
    records = text.split("$$$$\n")
    assert records[-1] == "" and len(records) == 51
    for number, record in enumerate(records[:-1], 1):
        lines = record.split("\n")
        assert lines[1] == "     RDKit          2D"  # no timestamp in the program line
        assert re.fullmatch(r"[ \d]{3}[ \d]{3}(  0){7}  0999 V2000", lines[3])
        headers = [line for line in lines if line.startswith(">")]
        assert headers[:5] == [f">  <{tag}>  ({number}) "
                               for tag in ("ID", "NAME", "LOGS", "LOGS_classification", "SMILES")]
        assert len(headers) == (6 if number % 25 == 0 else 5)  # the optional two-line NOTE
    assert "SYN-000037ʹ-isomer" in text
    smi = names["molecules_subset.smi"].decode("utf-8").split("\n")
    assert smi[:2] == ["# synthetic molecules: a subset of molecules.sdf", "SMILES\tName"]
    assert smi[-1] == "" and all(re.fullmatch(r"\S+\t.+", line) for line in smi[2:-1])


def test_same_params_give_identical_bytes_and_smaller_files_are_prefixes(tmp_path, tiny):
    molecules.write(tmp_path / "again", TINY)
    assert folder_bytes(tmp_path / "again") == folder_bytes(tiny)
    molecules.write(tmp_path / "more", Params(n_molecules=60))
    assert folder_bytes(tmp_path / "more")["molecules.sdf"].startswith(folder_bytes(tiny)["molecules.sdf"])
    molecules.write(tmp_path / "other", Params(n_molecules=50, seed=7))
    assert folder_bytes(tmp_path / "other")["molecules.sdf"] != folder_bytes(tiny)["molecules.sdf"]


def test_reader_keeps_every_generated_molecule_and_quarantines_the_bad_records(tiny):
    result = tables(tiny)
    counts = result["molecules"].groupby("source_file").size().to_dict()
    subset_rows = len(folder_bytes(tiny)["molecules_subset.smi"].decode().splitlines()) - 2
    assert counts == {"invalid_records.sdf": 2, "molecules.sdf": 50, "molecules_subset.smi": subset_rows}
    assert subset_rows > 0
    quarantine = result["quarantine"]
    assert set(quarantine["file"]) == {str(tiny / "invalid_records.sdf")}
    assert list(zip(quarantine["line"], quarantine["problem"], strict=True)) == QUARANTINED
    with pytest.raises(reader.RawFormatError) as caught:
        list(reader.read(tiny, reader.Params()))
    assert (caught.value.line, caught.value.problem) == QUARANTINED[0]


def test_properties_and_classes_follow_the_written_values(tiny):
    frame = wide(tables(tiny))
    expected = np.select([frame["logs"] <= -3, frame["logs"] <= -1], ["(A) low", "(B) medium"], "(C) high")
    assert frame["logs_class"].tolist() == expected.tolist()
    assert frame["logs"].notna().all() and (frame["logs"] == frame["logs"].round(2)).all()
    assert frame["name"].str.startswith(("SYN-", "α-SYN-")).all()


def test_default_scale_has_realistic_spread_and_few_duplicates(default):
    frame = wide(default)
    assert len(frame) == 1000
    assert -4.5 < frame["logs"].mean() < -2.0 and 1.0 < frame["logs"].std() < 2.5
    assert frame["heavy_atoms"].between(2, 40).all() and frame["heavy_atoms"].median() >= 12
    assert frame["duplicate_of"].notna().mean() < 0.1
    assert set(frame["logs_class"]) == {"(A) low", "(B) medium", "(C) high"}


def test_esol_relation_is_recoverable_from_the_descriptors(default):
    frame = wide(default)
    fit = LinearRegression().fit(frame[DESCRIPTORS], frame["logs"])
    assert fit.score(frame[DESCRIPTORS], frame["logs"]) > 0.8
    esol = ["logp", "mol_wt_g_mol", "rotatable_bonds", "aromatic_proportion"]
    coefficients = LinearRegression().fit(frame[esol], frame["logs"]).coef_
    assert coefficients == pytest.approx([-0.63, -0.0062, 0.066, -0.74], rel=0.25)


def test_params_reject_unknown_keys_and_bad_sizes():
    with pytest.raises(ValidationError):
        Params(n_molecules=10, n_basins=3)
    with pytest.raises(ValidationError):
        Params(n_molecules=0)
